// libFuzzer target: arbitrary bytes through the stdio line framer and the JSON-RPC decoder and
// dispatcher. Every line must get at most one reply, and nothing may crash or hang.
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "acp/connection.hpp"
#include "acp/line_framer.hpp"
#include "acp/params.hpp"

namespace {

struct NullTransport : acp::Transport {
  std::size_t sent = 0;
  void send(std::string line) override {
    // Everything the server writes must itself be valid JSON on one line.
    if (line.find('\n') != std::string::npos) std::abort();
    boost::json::error_code ec;
    (void)boost::json::parse(line, ec);
    if (ec) std::abort();
    ++sent;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  boost::asio::io_context ioc;
  NullTransport transport;
  acp::Connection conn(ioc.get_executor(), transport);
  conn.on_request("echo", [](boost::json::value p, acp::RequestContext) -> acp::awaitable<boost::json::value> {
    acp::Params params(p);
    auto text = params.optional_string("text");
    co_return boost::json::object{{"text", text.value_or("")}};
  });
  struct Sink : acp::LineFramer::Sink {
    acp::Connection* conn;
    void on_line(std::string&& line) override { conn->handle_line(line); }
    void on_oversized_line(std::size_t n) override { conn->handle_oversized_line(n); }
  } sink;
  sink.conn = &conn;
  acp::LineFramer framer(sink, 1 << 16);
  framer.feed(std::string_view(reinterpret_cast<const char*>(data), size));
  framer.finish();
  ioc.run();
  return 0;
}
