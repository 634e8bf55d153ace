// The JSON-RPC connection driven through an in-memory transport on a real io_context.
#include "acp/connection.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <functional>
#include <optional>
#include <vector>
#include <stdexcept>
#include <string>

#include "acp/params.hpp"

namespace {

namespace json = boost::json;

struct MemoryTransport : acp::Transport {
  std::vector<json::value> sent;
  void send(std::string line) override { sent.push_back(json::parse(line)); }
};

class ConnectionTest : public ::testing::Test {
 protected:
  boost::asio::io_context ioc;
  MemoryTransport transport;
  acp::Connection conn{ioc.get_executor(), transport};

  // What the connection wrote. A missing message is a failure with a message, never a crash:
  // these return an empty object then, whose .at() throws, which gtest reports as this test's failure.
  json::value last() {
    if (transport.sent.empty()) {
      ADD_FAILURE() << "expected the connection to have written a message; it wrote nothing";
      return json::object{};
    }
    return transport.sent.back();
  }
  json::value sent(std::size_t i) {
    if (i >= transport.sent.size()) {
      ADD_FAILURE() << "expected message #" << i << " from the connection; it wrote " << transport.sent.size();
      return json::object{};
    }
    return transport.sent[i];
  }
  // The response to the request with this id (the first one), or an empty object and a failure.
  json::value reply_to(const json::value& id) {
    for (const auto& m : transport.sent)
      if (auto* o = m.if_object(); o && !o->contains("method") && o->contains("id") && o->at("id") == id) return m;
    std::string all;
    for (const auto& m : transport.sent) all += "\n  " + json::serialize(m);
    ADD_FAILURE() << "no response to request " << json::serialize(id) << "; the connection wrote:" << all;
    return json::object{};
  }
  // Runs everything ready without waiting: calls still pending keep timers armed forever.
  void run() {
    ioc.restart();
    while (ioc.poll() > 0) {
    }
  }
};

TEST_F(ConnectionTest, ParseErrorHasNullId) {
  conn.handle_line("{not json");
  ASSERT_EQ(transport.sent.size(), 1u);
  EXPECT_EQ(last().at("id"), nullptr);
  EXPECT_EQ(last().at("error").at("code"), -32700);
}

TEST_F(ConnectionTest, InvalidUtf8IsAParseError) {
  conn.handle_line("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"s\":\"\xff\xfe\"}}");
  EXPECT_EQ(last().at("error").at("code"), -32700);
}

TEST_F(ConnectionTest, NotARequestAndBatchesAreInvalidRequests) {
  conn.handle_line(R"({"jsonrpc":"2.0","id":7})");
  EXPECT_EQ(last(), json::parse(R"({"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid request: no \"method\", and not a response"}})"));
  conn.handle_line(R"([{"jsonrpc":"2.0","id":1,"method":"a"}])");
  EXPECT_EQ(last().at("error").at("code"), -32600);
  conn.handle_line(R"({"jsonrpc":"1.0","id":"x","method":"a"})");
  EXPECT_EQ(last().at("id"), "x");
  EXPECT_EQ(last().at("error").at("code"), -32600);
}

// JSON-RPC 2.0, read the same way as bridge::mcp::Client reads it: `"id": null` with a method is a
// request (answered, with id null), and only a missing id makes a notification.
TEST_F(ConnectionTest, ARequestWithANullIdIsAnsweredWithANullId) {
  int calls = 0;
  conn.on_request("ping", [&](json::value, acp::RequestContext) -> acp::awaitable<json::value> {
    ++calls;
    co_return json::object{};
  });
  conn.handle_line(R"({"jsonrpc":"2.0","id":null,"method":"ping"})");
  conn.handle_line(R"({"jsonrpc":"2.0","method":"ping"})");
  run();
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(transport.sent.size(), 1u);
  EXPECT_EQ(last(), json::parse(R"({"jsonrpc":"2.0","id":null,"result":{}})"));
}

TEST_F(ConnectionTest, UnknownMethodIsMethodNotFoundAndUnknownNotificationIsIgnored) {
  conn.handle_line(R"({"jsonrpc":"2.0","id":"abc","method":"foo/bar"})");
  EXPECT_EQ(last(), json::parse(R"({"jsonrpc":"2.0","id":"abc","error":{"code":-32601,"message":"Method not found: foo/bar"}})"));
  conn.handle_line(R"({"jsonrpc":"2.0","method":"foo/notify"})");
  EXPECT_EQ(transport.sent.size(), 1u);
}

TEST_F(ConnectionTest, HandlerResultAndRpcErrorsAreAnsweredWithTheSameId) {
  conn.on_request("echo", [](json::value p, acp::RequestContext) -> acp::awaitable<json::value> {
    acp::Params params(p);
    co_return json::object{{"text", params.required_string("text")}};
  });
  conn.handle_line(R"({"jsonrpc":"2.0","id":42,"method":"echo","params":{"text":"hi"}})");
  conn.handle_line(R"({"jsonrpc":"2.0","id":43,"method":"echo","params":{}})");
  run();
  ASSERT_EQ(transport.sent.size(), 2u);
  EXPECT_EQ(sent(0), json::parse(R"({"jsonrpc":"2.0","id":42,"result":{"text":"hi"}})"));
  EXPECT_EQ(sent(1), json::parse(R"({"jsonrpc":"2.0","id":43,"error":{"code":-32602,"message":"Invalid params: missing required field 'text'"}})"));
}

TEST_F(ConnectionTest, OutgoingCallsMatchRepliesByIdInAnyOrder) {
  std::vector<std::string> got;
  auto caller = [&](std::string tag) -> acp::awaitable<void> {
    json::object params{{"tag", tag}};
    auto r = co_await conn.call("client/thing", std::move(params));
    got.push_back(tag + "=" + std::string(r.as_object().at("v").as_string()));
  };
  boost::asio::co_spawn(ioc, caller("a"), boost::asio::detached);
  boost::asio::co_spawn(ioc, caller("b"), boost::asio::detached);
  run();
  ASSERT_EQ(transport.sent.size(), 2u);
  auto id_a = sent(0).at("id");
  auto id_b = sent(1).at("id");
  conn.handle_line(json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", id_b}, {"result", {{"v", "B"}}}}));
  conn.handle_line(json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", id_a}, {"result", {{"v", "A"}}}}));
  run();
  EXPECT_EQ(got, (std::vector<std::string>{"b=B", "a=A"}));
}

TEST_F(ConnectionTest, CancellingAnOutgoingCallTellsThePeerAndFailsTheCall) {
  support::CancelSource cancel;
  int code = 0;
  auto caller = [&]() -> acp::awaitable<void> {
    try {
      json::object params;
      co_await conn.call("slow", std::move(params), &cancel);
    } catch (const acp::RpcError& e) {
      code = e.code();
    }
  };
  boost::asio::co_spawn(ioc, caller(), boost::asio::detached);
  run();
  cancel.cancel();
  run();
  EXPECT_EQ(code, acp::error_code::kRequestCancelled);
  EXPECT_EQ(last().at("method"), "$/cancel_request");
  EXPECT_EQ(last().at("params").at("requestId"), sent(0).at("id"));
}

TEST_F(ConnectionTest, CancelRequestNotificationCancelsTheRunningHandler) {
  std::shared_ptr<support::CancelSource> seen;
  boost::asio::steady_timer gate(ioc, boost::asio::steady_timer::time_point::max());
  conn.on_request("wait", [&](json::value, acp::RequestContext ctx) -> acp::awaitable<json::value> {
    seen = ctx.cancel;
    auto reg = ctx.cancel->on_cancel([&] { gate.cancel(); });
    co_await gate.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    throw acp::RpcError(acp::error_code::kRequestCancelled, "Request cancelled");
  });
  conn.handle_line(R"({"jsonrpc":"2.0","id":"w1","method":"wait"})");
  run();
  ASSERT_TRUE(seen);
  conn.handle_line(R"({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"w1"}})");
  run();
  EXPECT_EQ(last(), json::parse(R"({"jsonrpc":"2.0","id":"w1","error":{"code":-32800,"message":"Request cancelled"}})"));
}

// A handler that waits until its request is cancelled, then fails the way `fail` says.
void register_fails_after_cancel(acp::Connection& conn, boost::asio::io_context& ioc, std::string method,
                                 std::function<void()> fail) {
  conn.on_request(method, [&ioc, fail](json::value, acp::RequestContext ctx) -> acp::awaitable<json::value> {
    boost::asio::steady_timer gate(ioc, boost::asio::steady_timer::time_point::max());
    auto reg = ctx.cancel->on_cancel([&] { gate.cancel(); });
    if (!ctx.cancel->cancelled()) co_await gate.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    fail();
    co_return json::object{};
  });
}

TEST_F(ConnectionTest, ARequestCancelledThenFailingIsAnsweredRequestCancelledNotInternalError) {
  register_fails_after_cancel(conn, ioc, "fails-plainly", [] { throw std::runtime_error("the work was interrupted"); });
  register_fails_after_cancel(conn, ioc, "fails-internally",
                              [] { throw acp::RpcError(acp::error_code::kInternalError, "half done"); });
  conn.handle_line(R"({"jsonrpc":"2.0","id":"p1","method":"fails-plainly"})");
  conn.handle_line(R"({"jsonrpc":"2.0","id":"i1","method":"fails-internally"})");
  run();
  ASSERT_TRUE(transport.sent.empty()) << "the handlers are still waiting: nothing is answered yet";
  conn.handle_line(R"({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"p1"}})");
  conn.handle_line(R"({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"i1"}})");
  run();
  for (const char* id : {"p1", "i1"}) {
    auto reply = reply_to(id);
    const auto* code = reply.is_object() && reply.as_object().contains("error")
                           ? reply.at("error").as_object().if_contains("code") : nullptr;
    ASSERT_TRUE(code) << "request " << id << " is answered with an error: " << json::serialize(reply);
    EXPECT_EQ(*code, acp::error_code::kRequestCancelled)
        << "promise: a request cancelled with $/cancel_request that then fails is answered -32800 (request "
           "cancelled), not -32603; request "
        << id << " got " << json::serialize(reply);
  }
}

TEST_F(ConnectionTest, ARequestFailingWithoutACancelKeepsItsInternalError) {
  conn.on_request("fails", [](json::value, acp::RequestContext) -> acp::awaitable<json::value> {
    throw std::runtime_error("broken");
    co_return json::object{};
  });
  conn.handle_line(R"({"jsonrpc":"2.0","id":5,"method":"fails"})");
  run();
  auto reply = reply_to(5);
  ASSERT_TRUE(reply.as_object().contains("error")) << json::serialize(reply);
  EXPECT_EQ(reply.at("error").at("code"), acp::error_code::kInternalError)
      << "promise: a failure nobody cancelled is an internal error (-32603): " << json::serialize(reply);
}

TEST_F(ConnectionTest, ClosingFailsPendingCalls) {
  bool failed = false;
  auto caller = [&]() -> acp::awaitable<void> {
    try {
      json::object params;
      co_await conn.call("x", std::move(params));
    } catch (const acp::RpcError&) {
      failed = true;
    }
  };
  boost::asio::co_spawn(ioc, caller(), boost::asio::detached);
  run();
  conn.close();
  run();
  EXPECT_TRUE(failed);
}

}  // namespace

namespace {

TEST_F(ConnectionTest, DeeplyNestedParamsAreServedAndTooDeepOnesAnsweredUnderTheirId) {
  int calls = 0;
  conn.on_request("schema", [&](json::value, acp::RequestContext) -> acp::awaitable<json::value> {
    ++calls;
    co_return json::object{};
  });
  const std::string deep = std::string(1000, '[') + std::string(1000, ']');
  conn.handle_line(R"({"jsonrpc":"2.0","id":"d1","method":"schema","params":{"s":)" + deep + "}}");
  run();
  EXPECT_EQ(calls, 1) << "a schema nested 1000 deep must reach its handler";
  EXPECT_TRUE(reply_to("d1").as_object().contains("result"));

  const std::size_t too_deep = acp::kMaxMessageDepth + 5;
  conn.handle_line(R"({"jsonrpc":"2.0","id":"d2","method":"schema","params":)" + std::string(too_deep, '[') +
                   std::string(too_deep, ']') + "}");
  run();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(reply_to("d2").at("error").at("code"), -32600) << "refused, under the request's own id";
}

}  // namespace

namespace {

// Issue 40 item 9: an answer the reader refuses (over the line limit, too deep, broken) whose id
// was read first fails the call it answers; before, the call waited forever.
struct ToConnection : acp::MessageReader::Sink {
  acp::Connection& conn;
  explicit ToConnection(acp::Connection& c) : conn(c) {}
  void on_message(acp::IncomingMessage&& m) override { conn.handle_message(std::move(m)); }
};

TEST_F(ConnectionTest, AnAnswerOverTheLineLimitFailsTheCallItAnswers) {
  std::optional<std::string> error;
  std::optional<json::value> result;
  auto caller = [&]() -> acp::awaitable<void> {
    try {
      result = co_await conn.call("fs/read_text_file", json::object{});
    } catch (const acp::RpcError& e) {
      error = e.what();
    }
  };
  boost::asio::co_spawn(ioc, caller(), boost::asio::detached);
  run();
  const auto id = sent(0).at("id");
  ToConnection sink(conn);
  acp::MessageReader reader(sink, /*max_line_bytes=*/4096);
  reader.feed(R"({"jsonrpc":"2.0","id":)" + json::serialize(id) + R"(,"result":{"content":")");
  for (int i = 0; i < 10; ++i) reader.feed(std::string(1000, 'x'));
  reader.feed("\"}}\n");
  run();
  ASSERT_TRUE(error.has_value()) << "the call must not wait forever";
  EXPECT_FALSE(result.has_value());
  EXPECT_NE(error->find("too large"), std::string::npos) << *error;
  EXPECT_EQ(last().at("id"), nullptr) << "the peer is told too, never under the id of our own call";
}

TEST_F(ConnectionTest, TooDeepAndBrokenAnswersFailTheirCallsAndOthersWait) {
  std::vector<std::string> outcome(3);
  auto caller = [&](int i) -> acp::awaitable<void> {
    try {
      co_await conn.call("x", json::object{});
      outcome[i] = "result";
    } catch (const acp::RpcError& e) {
      outcome[i] = std::string("error: ") + e.what();
    }
  };
  for (int i = 0; i < 3; ++i) boost::asio::co_spawn(ioc, caller(i), boost::asio::detached);
  run();
  const std::string too_deep(acp::kMaxMessageDepth + 5, '[');
  conn.handle_line(R"({"jsonrpc":"2.0","id":)" + json::serialize(sent(0).at("id")) + R"(,"result":)" + too_deep);
  conn.handle_line(R"({"jsonrpc":"2.0","id":)" + json::serialize(sent(1).at("id")) + R"(,"result":{"a":tru})");
  run();
  EXPECT_NE(outcome[0].find("error: The client's answer was refused: nested deeper"), std::string::npos) << outcome[0];
  EXPECT_NE(outcome[1].find("error: The client's answer was refused"), std::string::npos) << outcome[1];
  EXPECT_EQ(outcome[2], "") << "a call whose answer has not come keeps waiting";
  conn.handle_line(R"({"jsonrpc":"2.0","id":)" + json::serialize(sent(2).at("id")) + R"(,"result":{}})");
  run();
  EXPECT_EQ(outcome[2], "result");
}

// Issue 40 item 15: a 200 MiB answer peaked at 3x its size; one of the copies was the connection's.
TEST_F(ConnectionTest, AnAnswerReachesTheCallerWithoutACopy) {
  const char* seen = nullptr;
  auto caller = [&]() -> acp::awaitable<void> {
    auto r = co_await conn.call("fs/read_text_file", json::object{});
    seen = r.as_object().at("content").as_string().data();
  };
  boost::asio::co_spawn(ioc, caller(), boost::asio::detached);
  run();
  auto message = acp::MessageReader::parse_line(R"({"jsonrpc":"2.0","id":)" + json::serialize(sent(0).at("id")) +
                                                R"(,"result":{"content":")" + std::string(100000, 'z') + R"("}})");
  const char* parsed = message.value.at("result").at("content").as_string().data();
  conn.handle_message(std::move(message));
  run();
  EXPECT_EQ(seen, parsed) << "the result was copied on its way to the caller";
}

}  // namespace
