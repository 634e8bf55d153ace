// The MCP client against an in-process fake server: handshake and version negotiation,
// pagination, list_changed, timeouts and cancellation (notifications/cancelled), progress,
// answers to server requests, and a transport that goes away.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include "acp/rpc_error.hpp"
#include "bridge/mcp/client.hpp"
#include "bridge/mcp/naming.hpp"

using namespace bridge::mcp;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// A scripted server: `serve` sees each message the client sends and may answer.
class FakeTransport : public Transport {
 public:
  explicit FakeTransport(asio::any_io_executor ex) : ex_(ex) {}
  std::function<void(FakeTransport&, const json::object&)> serve;
  std::vector<json::object> sent;
  bool stateless_mode = false;
  bool closed = false;
  std::string version_header;

  asio::awaitable<void> start(Handlers h, std::chrono::milliseconds) override {
    handlers_ = std::move(h);
    co_return;
  }
  void send(json::object m) override {
    sent.push_back(m);
    if (serve) serve(*this, m);
  }
  asio::awaitable<void> close() override {
    closed = true;
    handlers_ = {};
    co_return;
  }
  void kill_now() override { closed = true; }
  bool stateless() const override { return stateless_mode; }
  void set_protocol_version(const std::string& v) override { version_header = v; }
  std::string describe() const override { return "fake"; }

  // Server -> client, asynchronously (as a real transport would).
  void push(json::object m) {
    asio::post(ex_, [this, m = std::move(m)]() mutable {
      if (handlers_.on_message) handlers_.on_message(std::move(m));
    });
  }
  void reply(const json::object& req, json::value result) {
    push(json::object{{"jsonrpc", "2.0"}, {"id", req.at("id")}, {"result", std::move(result)}});
  }
  void drop(std::string why) {
    asio::post(ex_, [this, why] {
      if (handlers_.on_closed) handlers_.on_closed(why);
    });
  }
  std::vector<json::object> sent_method(std::string_view method) const {
    std::vector<json::object> r;
    for (auto& m : sent)
      if (m.contains("method") && m.at("method").as_string() == method) r.push_back(m);
    return r;
  }

 private:
  asio::any_io_executor ex_;
  Handlers handlers_;
};

std::string method_of(const json::object& m) {
  auto* v = m.if_contains("method");
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

json::object init_result(const char* version = "2025-06-18") {
  return json::object{{"protocolVersion", version},
                      {"capabilities", json::object{{"tools", json::object{{"listChanged", true}}}}},
                      {"serverInfo", json::object{{"name", "fake"}, {"version", "1"}}}};
}

// A well-behaved server with `pages` pages of tools.
void standard_server(FakeTransport& t, const json::object& m, int pages = 1) {
  auto method = method_of(m);
  if (method == "initialize") t.reply(m, init_result());
  else if (method == "server/discover") t.reply(m, init_result("2026-07-28"));
  else if (method == "tools/list") {
    int page = 0;
    if (auto* p = m.if_contains("params"); p && p->as_object().contains("cursor"))
      page = std::stoi(std::string(p->as_object().at("cursor").as_string()));
    json::array tools{json::object{{"name", "tool" + std::to_string(page)},
                                   {"inputSchema", json::object{{"type", "object"}}}}};
    json::object r{{"tools", tools}};
    if (page + 1 < pages) r["nextCursor"] = std::to_string(page + 1);
    t.reply(m, r);
  } else if (method == "tools/call") {
    t.reply(m, json::object{{"content", json::array{json::object{{"type", "text"}, {"text", "ok"}}}}});
  }
}

struct Fixture {
  asio::io_context ioc;
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>(ioc.get_executor());
  std::shared_ptr<Client> client;
  int tools_changed = 0;
  std::string closed_reason;

  Fixture() {
    Client::Options o;
    o.log_id = "fake";
    o.roots = [] { return std::vector<Root>{{file_uri("/work/my project"), "my project"}}; };
    o.on_tools_changed = [this] { ++tools_changed; };
    o.on_closed = [this](const std::string& r) { closed_reason = r; };
    client = std::make_shared<Client>(ioc.get_executor(), transport, o);
  }

  template <class F>
  void run(F f) {
    bool done = false;
    std::exception_ptr err;
    asio::co_spawn(ioc, [&]() -> asio::awaitable<void> { co_await f(); done = true; },
                   [&](std::exception_ptr e) { err = e; });
    ioc.run_for(5s);
    if (err) std::rethrow_exception(err);
    ASSERT_TRUE(done) << "the coroutine did not finish";
  }
};

asio::awaitable<void> sleep_ms(int ms) {
  asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
  co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
}

}  // namespace

TEST(McpClient, HandshakeOffersVersionAndSendsInitialized) {
  Fixture f;
  f.transport->serve = [](FakeTransport& t, const json::object& m) { standard_server(t, m); };
  f.run([&]() -> asio::awaitable<void> { co_await f.client->connect(2s); });
  auto inits = f.transport->sent_method("initialize");
  ASSERT_EQ(inits.size(), 1u);
  const auto& p = inits[0].at("params").as_object();
  EXPECT_EQ(p.at("protocolVersion").as_string(), "2025-06-18");
  EXPECT_TRUE(p.at("capabilities").as_object().at("roots").as_object().at("listChanged").as_bool());
  EXPECT_EQ(p.at("clientInfo").as_object().at("name").as_string(), "openvaala");
  ASSERT_EQ(f.transport->sent_method("notifications/initialized").size(), 1u);
  EXPECT_FALSE(f.transport->sent_method("notifications/initialized")[0].contains("id"));
  EXPECT_EQ(f.client->protocol_version(), "2025-06-18");
  EXPECT_EQ(f.transport->version_header, "2025-06-18");
  EXPECT_EQ(f.client->server_info().at("name").as_string(), "fake");
  EXPECT_TRUE(f.client->connected());
}

TEST(McpClient, AcceptsOlderAndNewerKnownVersions) {
  for (const char* v : {"2025-11-25", "2025-03-26", "2024-11-05"}) {
    Fixture f;
    f.transport->serve = [v](FakeTransport& t, const json::object& m) {
      if (method_of(m) == "initialize") t.reply(m, init_result(v));
    };
    f.run([&]() -> asio::awaitable<void> { co_await f.client->connect(2s); });
    EXPECT_EQ(f.client->protocol_version(), v);
  }
}

TEST(McpClient, RejectsUnknownVersion) {
  Fixture f;
  f.transport->serve = [](FakeTransport& t, const json::object& m) {
    if (method_of(m) == "initialize") t.reply(m, init_result("2023-01-01"));
  };
  f.run([&]() -> asio::awaitable<void> {
    try {
      co_await f.client->connect(2s);
      ADD_FAILURE() << "connect succeeded";
    } catch (const McpError& e) {
      EXPECT_EQ(e.kind(), McpError::Kind::Protocol);
      EXPECT_NE(std::string(e.what()).find("2023-01-01"), std::string::npos) << e.what();
    }
  });
  EXPECT_TRUE(f.transport->sent_method("notifications/initialized").empty());
  EXPECT_TRUE(f.transport->closed);
}

TEST(McpClient, InitializeTimeout) {
  Fixture f;  // a server that never answers
  f.run([&]() -> asio::awaitable<void> {
    try {
      co_await f.client->connect(100ms);
      ADD_FAILURE() << "connect succeeded";
    } catch (const McpError& e) {
      EXPECT_EQ(e.kind(), McpError::Kind::Timeout);
    }
  });
}

TEST(McpClient, StatelessTransportSkipsHandshake) {
  Fixture f;
  f.transport->stateless_mode = true;
  f.transport->serve = [](FakeTransport& t, const json::object& m) { standard_server(t, m); };
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    auto tools = co_await f.client->list_tools(2s);
    EXPECT_EQ(tools.size(), 1u);
  });
  EXPECT_TRUE(f.transport->sent_method("initialize").empty());
  EXPECT_EQ(f.client->protocol_version(), "2026-07-28");
}

TEST(McpClient, StatelessTransportKeepsDiscoveredCapabilities) {
  // An editor's MCP server over ACP: server/discover says what initialize would have, and its
  // capabilities are kept (prompts and resources are asked for only when they say so).
  Fixture f;
  f.transport->stateless_mode = true;
  f.transport->serve = [](FakeTransport& t, const json::object& m) {
    if (method_of(m) != "server/discover") return standard_server(t, m);
    auto r = init_result("2026-07-28");
    r["capabilities"] = json::object{{"tools", json::object{}}, {"prompts", json::object{}}, {"resources", json::object{}}};
    r["instructions"] = "use the editor's tools";
    t.reply(m, r);
  };
  f.run([&]() -> asio::awaitable<void> { co_await f.client->connect(2s); });
  ASSERT_EQ(f.transport->sent_method("server/discover").size(), 1u);
  EXPECT_TRUE(f.transport->sent_method("initialize").empty());
  EXPECT_TRUE(f.client->connected());
  EXPECT_TRUE(f.client->server_capabilities().contains("prompts"));
  EXPECT_TRUE(f.client->server_capabilities().contains("resources"));
  EXPECT_EQ(f.client->server_info().at("name").as_string(), "fake");
  EXPECT_EQ(f.client->instructions(), "use the editor's tools");
}

TEST(McpClient, StatelessDiscoverRefusedLeavesToolsOnly) {
  Fixture f;
  f.transport->stateless_mode = true;
  f.transport->serve = [](FakeTransport& t, const json::object& m) {
    if (method_of(m) != "server/discover") return standard_server(t, m);
    t.push(json::object{{"jsonrpc", "2.0"}, {"id", m.at("id")},
                        {"error", json::object{{"code", -32601}, {"message", "Method not found"}}}});
  };
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    EXPECT_EQ((co_await f.client->list_tools(2s)).size(), 1u);
  });
  EXPECT_TRUE(f.client->connected());
  EXPECT_TRUE(f.client->server_capabilities().empty());
}

TEST(McpClient, StatelessDiscoverUnansweredFailsTheConnect) {
  Fixture f;  // the editor never answers: as unreachable as an unanswered initialize
  f.transport->stateless_mode = true;
  f.run([&]() -> asio::awaitable<void> {
    try {
      co_await f.client->connect(100ms);
      ADD_FAILURE() << "connect succeeded";
    } catch (const McpError& e) {
      EXPECT_EQ(e.kind(), McpError::Kind::Timeout);
      EXPECT_NE(std::string(e.what()).find("server/discover"), std::string::npos) << e.what();
    }
  });
  EXPECT_FALSE(f.client->connected());
}

TEST(McpClient, ListToolsFollowsCursors) {
  Fixture f;
  f.transport->serve = [](FakeTransport& t, const json::object& m) { standard_server(t, m, 3); };
  std::vector<ToolInfo> tools;
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    tools = co_await f.client->list_tools(2s);
  });
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(tools[2].name, "tool2");
  EXPECT_EQ(tools[0].input_schema.at("type").as_string(), "object");
  auto lists = f.transport->sent_method("tools/list");
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_FALSE(lists[0].at("params").as_object().contains("cursor"));
  EXPECT_EQ(lists[2].at("params").as_object().at("cursor").as_string(), "2");
}

TEST(McpClient, UnsolicitedListChangedMarksToolsStale) {
  Fixture f;
  f.transport->serve = [](FakeTransport& t, const json::object& m) {
    standard_server(t, m);
    if (method_of(m) == "notifications/initialized")
      t.push(json::object{{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
  };
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    co_await sleep_ms(20);
    EXPECT_TRUE(f.client->tools_stale());
    co_await f.client->list_tools(2s);
    EXPECT_FALSE(f.client->tools_stale());
  });
  EXPECT_EQ(f.tools_changed, 1);
}

// Calls a tool the server never answers; expects it to time out and says how long that took.
asio::awaitable<std::chrono::steady_clock::duration> call_until_timeout(Client& client, std::string name,
                                                                        std::chrono::milliseconds timeout) {
  const auto started = std::chrono::steady_clock::now();
  try {
    co_await client.call_tool(name, json::object{}, timeout);
    ADD_FAILURE() << "the " << timeout.count() << " ms call did not time out";
  } catch (const McpError& e) {
    EXPECT_EQ(e.kind(), McpError::Kind::Timeout) << e.what();
  }
  co_return std::chrono::steady_clock::now() - started;
}

// A server that answers everything but tools/call.
void silent_on_tool_calls(FakeTransport& t, const json::object& m) {
  if (method_of(m) != "tools/call") standard_server(t, m);
}

TEST(McpClient, CallToolTimeoutSendsCancelled) {
  Fixture f;
  f.transport->serve = silent_on_tool_calls;
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    co_await call_until_timeout(*f.client, "slow", 50ms);
  });
  auto calls = f.transport->sent_method("tools/call");
  auto cancels = f.transport->sent_method("notifications/cancelled");
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].at("params").as_object().at("requestId"), calls[0].at("id"));
  EXPECT_EQ(cancels[0].at("params").as_object().at("reason").as_string(), "timeout");
}

// One timer serves every request's timeout: a short timeout asked after a long one still ends its
// request in time, and the long one is still answered.
TEST(McpClient, AShortTimeoutAfterALongOneStillEndsItsRequestInTime) {
  Fixture f;
  json::object held;
  f.transport->serve = [&](FakeTransport& t, const json::object& m) {
    if (method_of(m) == "tools/call") {
      if (held.empty()) held = m;  // the long call is answered later; the short one never
    } else {
      standard_server(t, m);
    }
  };
  bool long_answered = false;
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    asio::co_spawn(
        co_await asio::this_coro::executor,
        [&]() -> asio::awaitable<void> {
          std::string name = "long";
          auto r = co_await f.client->call_tool(name, json::object{}, 30s);
          long_answered = r.contains("content");
        },
        asio::detached);
    co_await sleep_ms(5);
    const auto took = co_await call_until_timeout(*f.client, "short", 50ms);
    EXPECT_LT(took, 2s) << "a short timeout waited for the longer request's deadline";
    f.transport->reply(held, json::object{{"content", json::array{}}});
    co_await sleep_ms(10);
  });
  EXPECT_TRUE(long_answered) << "the long call was not answered after the short one timed out";
}

// The timer sweeps more often than the timeouts it serves: a request still pending after a sweep
// keeps being watched and times out at its own deadline.
TEST(McpClient, ATimeoutLongerThanASweepStillEndsTheRequest) {
  Fixture f;
  f.transport->serve = silent_on_tool_calls;
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    const auto took = co_await call_until_timeout(*f.client, "silent", 400ms);
    EXPECT_GE(took, 390ms) << "the request timed out before its deadline";
  });
}

// A client whose requests are all answered leaves nothing armed for long: an io_context that runs
// until it has no work (a CLI command, a test) finishes instead of waiting out a tool timeout.
TEST(McpClient, AnIdleClientDoesNotHoldItsIoContext) {
  Fixture f;
  f.transport->serve = [](FakeTransport& t, const json::object& m) { standard_server(t, m); };
  const auto started = std::chrono::steady_clock::now();
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(60s);
    std::string name = "fast";
    auto r = co_await f.client->call_tool(name, json::object{}, 60s);
    EXPECT_TRUE(r.contains("content"));
  });
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s)
      << "the io_context ran on after the last answer (a request's timeout kept it busy)";
  EXPECT_TRUE(f.client->connected());
}

TEST(McpClient, CancelSendsCancelledAndLateReplyIsIgnored) {
  Fixture f;
  json::object held;
  f.transport->serve = [&](FakeTransport& t, const json::object& m) {
    if (method_of(m) == "tools/call") held = m;
    else standard_server(t, m);
  };
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    support::CancelSource cancel;
    asio::steady_timer timer(co_await asio::this_coro::executor, 30ms);
    timer.async_wait([&](boost::system::error_code) { cancel.cancel(); });
    try {
      std::string name = "slow";
      co_await f.client->call_tool(name, json::object{}, 5s, &cancel);
      ADD_FAILURE() << "not cancelled";
    } catch (const McpError& e) {
      EXPECT_EQ(e.kind(), McpError::Kind::Cancelled);
    }
    f.transport->reply(held, json::object{{"content", json::array{}}});  // too late: dropped
    co_await sleep_ms(10);
    // The client still works.
    std::string name = "fast";
    f.transport->serve = [](FakeTransport& t, const json::object& m) { standard_server(t, m); };
    auto r = co_await f.client->call_tool(name, json::object{}, 2s);
    EXPECT_TRUE(r.contains("content"));
  });
  ASSERT_EQ(f.transport->sent_method("notifications/cancelled").size(), 1u);
}

TEST(McpClient, ServerErrorBecomesRpcError) {
  Fixture f;
  f.transport->serve = [](FakeTransport& t, const json::object& m) {
    if (method_of(m) == "tools/call")
      t.push(json::object{{"jsonrpc", "2.0"}, {"id", m.at("id")},
                          {"error", json::object{{"code", -32602}, {"message", "Unknown tool: nope"}}}});
    else standard_server(t, m);
  };
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    try {
      std::string name = "nope";
      co_await f.client->call_tool(name, json::object{}, 2s);
      ADD_FAILURE();
    } catch (const McpError& e) {
      EXPECT_EQ(e.kind(), McpError::Kind::Rpc);
      EXPECT_EQ(e.code(), -32602);
      EXPECT_STREQ(e.what(), "Unknown tool: nope");
    }
  });
}

TEST(McpClient, ProgressReachesTheCaller) {
  Fixture f;
  f.transport->serve = [](FakeTransport& t, const json::object& m) {
    if (method_of(m) == "tools/call") {
      auto token = m.at("params").as_object().at("_meta").as_object().at("progressToken");
      t.push(json::object{{"jsonrpc", "2.0"}, {"method", "notifications/progress"},
                          {"params", json::object{{"progressToken", token}, {"progress", 1}, {"total", 2}}}});
      t.reply(m, json::object{{"content", json::array{}}});
    } else {
      standard_server(t, m);
    }
  };
  int progress = 0;
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    std::string name = "long";
    Client::ProgressFn on_progress = [&](const json::object& p) { progress += static_cast<int>(p.at("progress").as_int64()); };
    co_await f.client->call_tool(name, json::object{}, 2s, nullptr, std::move(on_progress));
  });
  EXPECT_EQ(progress, 1);
}

TEST(McpClient, AnswersServerRequests) {
  Fixture f;
  f.transport->serve = [](FakeTransport& t, const json::object& m) { standard_server(t, m); };
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    f.transport->push(json::object{{"jsonrpc", "2.0"}, {"id", "r1"}, {"method", "roots/list"}});
    f.transport->push(json::object{{"jsonrpc", "2.0"}, {"id", 7}, {"method", "sampling/createMessage"}, {"params", json::object{}}});
    f.transport->push(json::object{{"jsonrpc", "2.0"}, {"id", 8}, {"method", "elicitation/create"}, {"params", json::object{}}});
    f.transport->push(json::object{{"jsonrpc", "2.0"}, {"id", 9}, {"method", "something/else"}});
    f.transport->push(json::object{{"jsonrpc", "2.0"}, {"id", 10}, {"method", "ping"}});
    f.transport->push(json::object{{"jsonrpc", "2.0"}, {"method", "notifications/message"},
                                   {"params", json::object{{"level", "info"}, {"data", "hello"}}}});
    co_await sleep_ms(20);
  });
  std::map<std::string, json::object> replies;
  for (auto& m : f.transport->sent)
    if (!m.contains("method") && m.contains("id")) replies[json::serialize(m.at("id"))] = m;
  ASSERT_EQ(replies.size(), 5u);
  auto roots = replies["\"r1\""].at("result").as_object().at("roots").as_array();
  ASSERT_EQ(roots.size(), 1u);
  EXPECT_EQ(roots[0].as_object().at("uri").as_string(), "file:///work/my%20project");
  EXPECT_EQ(roots[0].as_object().at("name").as_string(), "my project");
  for (const char* id : {"7", "9"}) EXPECT_EQ(replies[id].at("error").as_object().at("code").as_int64(), -32601) << id;
  EXPECT_NE(json::serialize(replies["7"]).find("sampling"), std::string::npos);
  // Nobody to ask: a clean decline at once, not an error.
  EXPECT_EQ(replies["8"].at("result"), (json::object{{"action", "decline"}}));
  // and no elicitation offered in initialize
  auto init = f.transport->sent_method("initialize");
  ASSERT_EQ(init.size(), 1u);
  EXPECT_FALSE(init[0].at("params").as_object().at("capabilities").as_object().contains("elicitation"));
  EXPECT_TRUE(replies["10"].at("result").as_object().empty());
}

// With someone to ask, elicitation is offered in initialize and the server's question goes to
// the asker while other messages keep flowing; its answer goes back unchanged.
TEST(McpClient, ElicitationGoesToTheAskerAndItsAnswerBackUnchanged) {
  asio::io_context ioc;
  auto transport = std::make_shared<FakeTransport>(ioc.get_executor());
  transport->serve = [](FakeTransport& t, const json::object& m) { standard_server(t, m); };
  json::object asked;
  int prompts_changed = 0, resources_changed = 0;
  Client::Options o;
  o.log_id = "fake";
  o.elicitation_capability = json::object{{"form", json::object{}}};
  o.elicit = [&](json::object params) -> asio::awaitable<json::object> {
    asked = params;
    co_await sleep_ms(10);
    co_return json::object{{"action", "accept"}, {"content", json::object{{"color", "red"}, {"n", 3}}}};
  };
  o.on_prompts_changed = [&] { ++prompts_changed; };
  o.on_resources_changed = [&] { ++resources_changed; };
  auto client = std::make_shared<Client>(ioc.get_executor(), transport, o);
  bool done = false;
  asio::co_spawn(ioc, [&]() -> asio::awaitable<void> {
    co_await client->connect(2s);
    json::object q{{"message", "Which color?"}, {"requestedSchema", json::object{{"type", "object"}}}};
    transport->push(json::object{{"jsonrpc", "2.0"}, {"id", 5}, {"method", "elicitation/create"}, {"params", q}});
    transport->push(json::object{{"jsonrpc", "2.0"}, {"id", 6}, {"method", "ping"}});
    transport->push(json::object{{"jsonrpc", "2.0"}, {"method", "notifications/prompts/list_changed"}});
    transport->push(json::object{{"jsonrpc", "2.0"}, {"method", "notifications/resources/list_changed"}});
    co_await sleep_ms(50);
    done = true;
  }, asio::detached);
  ioc.run_for(5s);
  ASSERT_TRUE(done);
  auto init = transport->sent_method("initialize");
  ASSERT_EQ(init.size(), 1u);
  EXPECT_EQ(init[0].at("params").as_object().at("capabilities").as_object().at("elicitation"),
            (json::object{{"form", json::object{}}}));
  EXPECT_EQ(asked.at("message"), "Which color?");
  std::vector<std::string> order;
  json::object answer;
  for (auto& m : transport->sent)
    if (!m.contains("method") && m.contains("id")) {
      order.push_back(json::serialize(m.at("id")));
      if (m.at("id") == 5) answer = m.at("result").as_object();
    }
  EXPECT_EQ(order, (std::vector<std::string>{"6", "5"})) << "the ping is not held up by the question";
  EXPECT_EQ(answer, (json::object{{"action", "accept"}, {"content", json::object{{"color", "red"}, {"n", 3}}}}));
  EXPECT_EQ(prompts_changed, 1);
  EXPECT_EQ(resources_changed, 1);
}

// JSON-RPC 2.0, read the same way as acp::Connection reads it: `"id": null` with a method is a
// request (answered, with id null), and only a missing id makes a notification.
TEST(McpClient, ARequestWithANullIdIsAnsweredWithANullId) {
  Fixture f;
  f.transport->serve = [](FakeTransport& t, const json::object& m) { standard_server(t, m); };
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    f.transport->push(json::object{{"jsonrpc", "2.0"}, {"id", nullptr}, {"method", "ping"}});
    f.transport->push(json::object{{"jsonrpc", "2.0"}, {"method", "ping"}});
    co_await sleep_ms(20);
  });
  std::vector<json::object> replies;
  for (auto& m : f.transport->sent)
    if (!m.contains("method")) replies.push_back(m);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0], json::parse(R"({"jsonrpc":"2.0","id":null,"result":{}})").as_object());
}

TEST(McpClient, TransportLossFailsPendingAndLaterCalls) {
  Fixture f;
  f.transport->serve = [](FakeTransport& t, const json::object& m) {
    if (method_of(m) == "tools/call") t.drop("the server exited with code 1");
    else standard_server(t, m);
  };
  f.run([&]() -> asio::awaitable<void> {
    co_await f.client->connect(2s);
    std::string name = "crash";
    try {
      co_await f.client->call_tool(name, json::object{}, 2s);
      ADD_FAILURE();
    } catch (const McpError& e) {
      EXPECT_EQ(e.kind(), McpError::Kind::Closed);
      EXPECT_NE(std::string(e.what()).find("exited with code 1"), std::string::npos) << e.what();
    }
    try {
      co_await f.client->call_tool(name, json::object{}, 2s);
      ADD_FAILURE();
    } catch (const McpError& e) {
      EXPECT_EQ(e.kind(), McpError::Kind::Closed);
    }
  });
  EXPECT_EQ(f.closed_reason, "the server exited with code 1");
  EXPECT_FALSE(f.client->connected());
}

// ---- naming ----

TEST(McpNaming, QualifiedNames) {
  EXPECT_EQ(qualified_tool_name("everything", "echo"), "mcp__everything__echo");
  EXPECT_EQ(qualified_tool_name("my server", "get.sum/v2"), "mcp__my_server__get_sum_v2");
  std::string long_tool(80, 'x');
  auto a = qualified_tool_name("srv", long_tool);
  auto b = qualified_tool_name("srv", long_tool + "y");
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.substr(0, 24), "mcp__srv__xxxxxxxxxxxxxx");
  EXPECT_EQ(qualified_tool_name("a", std::string(56, 't')), "mcp__a__" + std::string(56, 't'));  // exactly 64: kept
  EXPECT_EQ(qualified_tool_name("a", std::string(57, 't')).size(), 64u);
}
