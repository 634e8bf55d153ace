// A permission prompt whose client went away (a network connection dropped) is answered
// `cancelled`: the tool does not run, and the turn goes on as after an editor's cancel.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "acp/client_api.hpp"

namespace {

struct NullTransport : acp::Transport {
  void send(std::string) override {}
};

TEST(ClientApiDisconnect, PermissionOfADroppedConnectionIsCancelled) {
  boost::asio::io_context ioc;
  NullTransport transport;
  acp::Connection conn(ioc.get_executor(), transport);
  acp::ClientApi client(conn);
  bool answered = false;
  bool threw = false;
  std::optional<std::string> choice = "unset";
  auto ask = [&]() -> acp::awaitable<void> {
    try {
      const std::vector<acp::PermissionOption> options{{"allow_once", "Allow", "allow_once"}};
      // Named, not temporaries inside co_await: GCC 12 mishandles those.
      const std::string session = "s1";
      boost::json::object tool_call{{"toolCallId", "t1"}};
      choice = co_await client.request_permission(session, std::move(tool_call), options, nullptr);
      answered = true;
    } catch (const std::exception&) {
      threw = true;
    }
  };
  boost::asio::co_spawn(ioc, ask(), boost::asio::detached);
  ioc.poll();
  conn.close();
  ioc.restart();
  ioc.poll();
  EXPECT_FALSE(threw);
  EXPECT_TRUE(answered);
  EXPECT_EQ(choice, std::nullopt) << "a dropped connection's permission request must answer cancelled, never a choice";
}

}  // namespace
