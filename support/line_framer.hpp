#pragma once
// Splits a byte stream into lines ('\n'-terminated, a trailing '\r' dropped). Pure and
// allocation-frugal: the hot path of the stdio reader. A line longer than max_line_bytes is
// reported once as oversized and its bytes are discarded up to the next newline, so one huge
// message can never exhaust memory or desynchronise the stream.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace support {

class LineFramer {
 public:
  static constexpr std::size_t kDefaultMaxLineBytes = 256u * 1024 * 1024;

  struct Sink {
    virtual ~Sink() = default;
    virtual void on_line(std::string&& line) = 0;
    virtual void on_oversized_line(std::size_t bytes_seen) = 0;
  };

  explicit LineFramer(Sink& sink, std::size_t max_line_bytes = kDefaultMaxLineBytes)
      : sink_(sink), max_(max_line_bytes) {}

  void feed(std::string_view bytes);
  // End of input: a final line without a newline is still delivered.
  void finish();

 private:
  void emit();

  Sink& sink_;
  std::size_t max_;
  std::string partial_;
  bool discarding_ = false;
  std::size_t discarded_ = 0;
};

}  // namespace support
