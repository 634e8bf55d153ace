// A connection whose peer went (a network client dropped): detach() leaves the requests in flight
// running to their end, unanswered, where close() cancels them; on_idle tells when the last one
// ended (then the owner may free the connection); a permission request pending at the drop, or
// asked after it, answers `cancelled`.
#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <string>
#include <vector>

#include "acp/client_api.hpp"
#include "acp/connection.hpp"

namespace {

namespace json = boost::json;

struct RecordingTransport : acp::Transport {
  std::vector<std::string> sent;
  void send(std::string line) override { sent.push_back(std::move(line)); }
};

// A connection with one request method, "work", that runs until `finish` is set (polled through a
// timer, as a turn waits for its model), noting whether it saw its cancel fire.
class ConnectionDetach : public ::testing::Test {
 protected:
  ConnectionDetach() {
    conn.on_request("work", [this](json::value, acp::RequestContext ctx) -> acp::awaitable<json::value> {
      boost::asio::steady_timer tick(ioc);
      while (!finish && !ctx.cancel->cancelled()) {
        tick.expires_after(std::chrono::milliseconds(1));
        co_await tick.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      }
      cancelled = ctx.cancel->cancelled();
      ended = true;
      co_return json::object{{"done", true}};
    });
    conn.on_idle([this] { ++idle_calls; });
  }
  void run_until(const std::function<bool()>& done) {
    for (int i = 0; i < 2000 && !done(); ++i) {
      ioc.restart();
      ioc.run_one_for(std::chrono::milliseconds(5));
    }
  }
  void start_work() {
    conn.handle_line(R"({"jsonrpc":"2.0","id":7,"method":"work","params":{}})");
    ioc.restart();
    ioc.poll();
  }

  boost::asio::io_context ioc;
  RecordingTransport transport;
  acp::Connection conn{ioc.get_executor(), transport};
  bool finish = false;
  bool ended = false;
  bool cancelled = false;
  int idle_calls = 0;
};

TEST_F(ConnectionDetach, ARequestInFlightRunsToItsEndUnansweredAndThenTheConnectionIsIdle) {
  start_work();
  ASSERT_EQ(conn.requests_in_flight(), 1u);
  conn.detach();
  EXPECT_TRUE(conn.closed());
  ioc.restart();
  ioc.poll();
  EXPECT_EQ(idle_calls, 0) << "idle while a request is still in flight";
  EXPECT_FALSE(ended) << "the request ended at the detach";
  finish = true;
  run_until([&] { return idle_calls > 0; });
  EXPECT_TRUE(ended);
  EXPECT_FALSE(cancelled) << "detach() must not cancel what the client asked for: a dropped client's turn runs to its end";
  EXPECT_EQ(conn.requests_in_flight(), 0u);
  EXPECT_EQ(idle_calls, 1) << "on_idle tells once the last request in flight of a detached connection ended";
  EXPECT_TRUE(transport.sent.empty()) << "nothing is sent to a client that went, not even the answer";
}

TEST_F(ConnectionDetach, CloseCancelsTheRequestsInFlight) {
  start_work();
  conn.close();
  run_until([&] { return ended; });
  EXPECT_TRUE(cancelled) << "close() (the process stops) cancels every request in flight";
  run_until([&] { return idle_calls > 0; });
  EXPECT_EQ(idle_calls, 1);
}

TEST_F(ConnectionDetach, ADetachedConnectionWithNothingInFlightIsIdleAtOnce) {
  conn.detach();
  ioc.restart();
  ioc.poll();
  EXPECT_EQ(idle_calls, 1);
}

TEST_F(ConnectionDetach, PermissionPendingAtTheDropOrAskedAfterItAnswersCancelled) {
  acp::ClientApi client(conn);
  const std::vector<acp::PermissionOption> options{{"allow_once", "Allow", "allow_once"}};
  std::vector<std::optional<std::string>> answers;
  auto ask = [&]() -> acp::awaitable<void> {
    const std::string session = "s1";
    json::object tool_call{{"toolCallId", "t1"}};
    answers.push_back(co_await client.request_permission(session, std::move(tool_call), options, nullptr));
  };
  boost::asio::co_spawn(ioc, ask(), boost::asio::detached);
  ioc.poll();
  conn.detach();
  boost::asio::co_spawn(ioc, ask(), boost::asio::detached);
  run_until([&] { return answers.size() == 2; });
  ASSERT_EQ(answers.size(), 2u) << "a permission request of a dropped client must be answered (cancelled), never hang or throw";
  EXPECT_EQ(answers[0], std::nullopt) << "pending at the drop: cancelled, never allowed";
  EXPECT_EQ(answers[1], std::nullopt) << "asked after the drop: cancelled, never allowed";
}

}  // namespace
