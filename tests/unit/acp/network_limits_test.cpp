// Limits of `openvaala acp --listen` (acp/network_limits.hpp): connection slots, and sessions
// per connection answered with a JSON-RPC error the agent never sees.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "acp/network_limits.hpp"

namespace {

namespace json = boost::json;

TEST(NetworkLimits, SlotsAreCountedAndGivenBack) {
  auto slots = std::make_shared<acp::ConnectionSlots>(2);
  auto a = slots->take();
  auto b = slots->take();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(slots->take()) << "a third connection must be refused at --max-connections 2";
  a->release();
  auto c = slots->take();
  EXPECT_TRUE(c) << "a released slot is free again";
  { auto moved = std::move(*c); }
  EXPECT_TRUE(slots->take()) << "a destroyed slot is free again";
}

// What the limited transport passes on and sends.
struct FakeTransport : acp::Transport {
  void send(std::string line) override { sent->push_back(std::move(line)); }
  void start(Handlers h) override { *handlers = std::move(h); }
  std::shared_ptr<std::vector<std::string>> sent = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<Handlers> handlers = std::make_shared<Handlers>();
};

struct Limited {
  explicit Limited(std::size_t max_sessions, std::shared_ptr<acp::ConnectionSlots> slots = nullptr) {
    auto fake = std::make_unique<FakeTransport>();
    sent = fake->sent;
    inner = fake->handlers;
    if (!slots) slots = std::make_shared<acp::ConnectionSlots>(1);
    transport = acp::make_limited_transport(std::move(fake), std::move(*slots->take()), max_sessions);
    transport->start({[this](acp::IncomingMessage&& m) { passed.push_back(json::serialize(m.value)); },
                      [this] { disconnected = true; }});
  }
  void in(const std::string& text) {
    acp::IncomingMessage m;
    m.value = json::parse(text);
    inner->on_message(std::move(m));
  }
  std::unique_ptr<acp::Transport> transport;
  std::shared_ptr<std::vector<std::string>> sent;
  std::shared_ptr<acp::Transport::Handlers> inner;
  std::vector<std::string> passed;
  bool disconnected = false;
};

TEST(NetworkLimits, SessionsPastTheLimitAreRefusedUntilOneCloses) {
  Limited c(2);
  c.in(R"({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}})");
  c.transport->send(R"({"jsonrpc":"2.0","id":1,"result":{"sessionId":"a"}})");
  c.in(R"({"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"b","cwd":"/","mcpServers":[]}})");
  c.transport->send(R"({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"b"}})");
  c.transport->send(R"({"jsonrpc":"2.0","id":2,"result":{}})");
  ASSERT_EQ(c.passed.size(), 2u);
  c.in(R"({"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/","mcpServers":[]}})");
  EXPECT_EQ(c.passed.size(), 2u) << "a third session at --max-sessions 2 must not reach the agent";
  ASSERT_FALSE(c.sent->empty());
  const auto refusal = json::parse(c.sent->back()).as_object();
  EXPECT_EQ(refusal.at("id").as_int64(), 3);
  EXPECT_EQ(refusal.at("error").at("code").as_int64(), acp::kTooManySessionsCode);
  // Loading a session this connection already holds opens nothing new.
  c.in(R"({"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"a","cwd":"/","mcpServers":[]}})");
  EXPECT_EQ(c.passed.size(), 3u);
  c.transport->send(R"({"jsonrpc":"2.0","id":4,"result":{}})");
  c.in(R"({"jsonrpc":"2.0","id":5,"method":"session/close","params":{"sessionId":"a"}})");
  c.transport->send(R"({"jsonrpc":"2.0","id":5,"result":{}})");
  c.in(R"({"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"/","mcpServers":[]}})");
  EXPECT_EQ(c.passed.size(), 5u) << "a closed session frees its place";
}

TEST(NetworkLimits, RequestsInFlightCountAndFailedOnesFreeTheirPlace) {
  Limited c(1);
  c.in(R"({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}})");
  c.in(R"({"jsonrpc":"2.0","id":2,"method":"session/fork","params":{"sessionId":"x","cwd":"/"}})");
  EXPECT_EQ(c.passed.size(), 1u) << "a session/new not yet answered holds its place";
  c.transport->send(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no"}})");
  c.in(R"({"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/","mcpServers":[]}})");
  EXPECT_EQ(c.passed.size(), 2u) << "a failed session/new opened nothing";
}

TEST(NetworkLimits, DisconnectGivesTheSlotBack) {
  auto slots = std::make_shared<acp::ConnectionSlots>(1);
  Limited c(4, slots);
  EXPECT_FALSE(slots->take());
  c.inner->on_disconnect();
  EXPECT_TRUE(c.disconnected);
  EXPECT_TRUE(slots->take()) << "a disconnected connection's slot is free again";
}

}  // namespace
