// libFuzzer target: arbitrary bytes through the stdio message reader and the JSON-RPC decoder and
// dispatcher. Every line must get at most one reply, and nothing may crash or hang.
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "acp/connection.hpp"
#include "acp/message_reader.hpp"
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
  struct Sink : acp::MessageReader::Sink {
    acp::Connection* conn;
    void on_message(acp::IncomingMessage&& m) override { conn->handle_message(std::move(m)); }
  } sink;
  sink.conn = &conn;
  acp::MessageReader reader(sink, 1 << 16);
  reader.feed(std::string_view(reinterpret_cast<const char*>(data), size));
  reader.finish();
  ioc.run();
  return 0;
}
