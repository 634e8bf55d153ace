#pragma once
// Reads JSON-RPC messages from a byte stream: one JSON value per line ('\n'-terminated, a
// trailing '\r' is whitespace), each parsed as its bytes arrive. The raw line is never held
// whole, so a 200 MiB message costs about its parsed size rather than twice that, and a line
// that is too long or too deep is reported once and skipped up to the next newline, so the
// stream never desynchronises. Nothing past the line limit reaches the parser, so a refused line
// never holds more than the limit. When a message cannot be used, the id it carried is still
// reported if it was read before the problem: a request's, so the sender gets its answer under its
// own id; a response's, so the call it answers fails instead of waiting forever.
#include <boost/json/value.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace acp {

inline constexpr std::size_t kMaxMessageBytes = 256u * 1024 * 1024;
// Deep enough for any real tool schema (the editor MCP schemas nest a few hundred
// levels at worst); the parser recurses once per level, which 10,000 levels keep well inside a
// thread's default 8 MiB stack.
inline constexpr std::size_t kMaxMessageDepth = 10000;

// One line of input: a JSON value, or why there is none.
struct IncomingMessage {
  enum class Problem { None, Syntax, TooDeep, TooLarge };
  boost::json::value value;  // the message, when problem == None
  Problem problem = Problem::None;
  std::string error;            // what was wrong, for the error reply
  boost::json::value reply_id;  // the request's id when it was read before the problem, else null
  boost::json::value response_id;  // the same for a response (the id of one of our calls)
  std::size_t bytes = 0;        // the length of the line
};

class MessageReader {
 public:
  struct Sink {
    virtual ~Sink() = default;
    virtual void on_message(IncomingMessage&& message) = 0;
  };

  explicit MessageReader(Sink& sink, std::size_t max_line_bytes = kMaxMessageBytes,
                         std::size_t max_depth = kMaxMessageDepth);
  ~MessageReader();

  void feed(std::string_view bytes);
  // End of input: a final line without a newline is still delivered.
  void finish();

  // One whole line, parsed the same way but with no size limit (blank lines give a Syntax problem).
  static IncomingMessage parse_line(std::string_view line, std::size_t max_depth = kMaxMessageDepth);

 private:
  class LineParser;
  void end_line();

  Sink& sink_;
  std::unique_ptr<LineParser> line_;
};

}  // namespace acp
