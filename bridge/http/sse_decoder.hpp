#pragma once
// Server-Sent Events (WHATWG EventSource) parsing, fed arbitrary byte chunks as they arrive
// from the network. Pure: shared by the model providers and the MCP HTTP transports.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bridge::http {

struct SseEvent {
  std::string event;  // empty means "message"
  std::string data;   // data lines joined with '\n'
  std::string id;
  std::optional<int> retry_ms;
};

class SseDecoder {
 public:
  // Appends every event completed by `chunk` to `out`.
  void feed(std::string_view chunk, std::vector<SseEvent>& out);
  // End of stream: a pending event without its blank line is dispatched (lenient, as servers
  // that close right after the last `data:` line exist).
  void finish(std::vector<SseEvent>& out);
  const std::string& last_event_id() const { return last_id_; }

 private:
  void process_line(std::string_view line, std::vector<SseEvent>& out);
  void dispatch(std::vector<SseEvent>& out);

  std::string buffer_;
  bool skip_lf_ = false;  // previous chunk ended with '\r'
  bool bom_checked_ = false;
  SseEvent current_;
  bool has_data_ = false;
  std::string last_id_;
};

}  // namespace bridge::http
