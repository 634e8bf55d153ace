// acp::Binder: typed handlers on a Connection; init gating, invalid params with the JSON path,
// method not found, notifications, typed outgoing notifications.
#include "acp/binder.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "acp/methods.hpp"
#include "acp/schema/prompt.hpp"
#include "acp/schema/session.hpp"

namespace {

namespace json = boost::json;
namespace schema = acp::schema;

struct MemoryTransport : acp::Transport {
  std::vector<json::value> sent;
  void send(std::string line) override { sent.push_back(json::parse(line)); }
};

struct Hello {
  std::string name;
};
void read(const schema::Reader& r, Hello& out) { out.name = r.get<std::string>("name"); }
struct Greeting {
  std::string text;
};
void tag_invoke(json::value_from_tag, json::value& jv, const Greeting& g) { jv = json::object{{"text", g.text}}; }

// A module with typed members, bound the way AcpAgent binds its methods.
struct Module {
  acp::Binder binder;
  std::vector<std::string> cancelled;
  explicit Module(acp::Connection& conn) : binder(conn) { binder.method("test/init", this, &Module::init); }
  acp::awaitable<acp::EmptyResponse> init(acp::NoParams) {
    binder.method(acp::methods::kSessionNew, this, &Module::new_session);
    binder.method("test/hello", this, &Module::hello);
    binder.notification(acp::methods::kSessionCancel, this, &Module::cancel);
    binder.initialized();
    co_return acp::EmptyResponse{};
  }
  acp::awaitable<Greeting> hello(Hello h, acp::RequestContext ctx) {
    co_return Greeting{"hello " + h.name + " #" + json::serialize(ctx.id)};
  }
  acp::awaitable<schema::NewSessionResponse> new_session(schema::NewSessionRequest req) {
    co_return schema::NewSessionResponse{"ses_" + req.cwd, {}, {}};
  }
  void cancel(schema::CancelNotification n) { cancelled.push_back(n.sessionId); }
};

class BinderTest : public ::testing::Test {
 protected:
  boost::asio::io_context ioc;
  MemoryTransport transport;
  acp::Connection conn{ioc.get_executor(), transport};
  Module module{conn};

  // Sends a request and returns its answer (an empty object and a failure when there is none).
  json::value request(int id, const char* method, const char* params) {
    conn.handle_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":)" + params + "}");
    ioc.restart();
    while (ioc.poll() > 0) {
    }
    for (const auto& m : transport.sent)
      if (m.as_object().contains("id") && m.at("id") == id) return m;
    ADD_FAILURE() << "no answer to " << method;
    return json::object{};
  }
  void initialize() { ASSERT_EQ(request(1, "test/init", "{}").at("result"), json::object{}); }
};

TEST_F(BinderTest, BeforeInitializeEveryOtherMethodIsNotInitialized) {
  for (const char* method : {"session/new", "auth/status", "logout", "foo/bar"}) {
    auto answer = request(7, method, R"({"cwd":"/w"})");
    ASSERT_TRUE(answer.as_object().contains("error")) << method << " before initialize must be refused";
    EXPECT_EQ(answer.at("error").at("code"), -32600) << method;
    EXPECT_NE(std::string(answer.at("error").at("message").as_string()).find("not initialized"), std::string::npos)
        << method << ": " << answer;
    transport.sent.clear();
  }
}

TEST_F(BinderTest, AfterInitializeUnknownMethodsAreNotFound) {
  initialize();
  EXPECT_EQ(request(2, "foo/bar", "{}").at("error").at("code"), -32601);
}

TEST_F(BinderTest, TypedHandlerGetsDecodedParamsAndItsAnswerIsEncoded) {
  initialize();
  EXPECT_EQ(request(3, "session/new", R"({"cwd":"/w","mcpServers":[]})").at("result"),
            json::parse(R"({"sessionId":"ses_/w","modes":{"currentModeId":"","availableModes":[]},"configOptions":[]})"));
  EXPECT_EQ(request(4, "test/hello", R"({"name":"ann"})").at("result"), json::parse(R"({"text":"hello ann #4"})"))
      << "a handler that takes the RequestContext gets the request's id";
}

TEST_F(BinderTest, InvalidParamsNameTheirPath) {
  initialize();
  auto answer = request(5, "session/new", R"({"cwd":"/w","mcpServers":[{"name":"a","command":"c"},{"name":"b","command":1}]})");
  EXPECT_EQ(answer.at("error"), json::parse(R"({"code":-32602,"message":"Invalid params: mcpServers[1].command must be a string"})"));
  EXPECT_EQ(request(6, "session/new", "[]").at("error").at("code"), -32602);
}

TEST_F(BinderTest, NotificationsAreTypedAndBadOnesDropped) {
  initialize();
  conn.handle_line(R"({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}})");
  conn.handle_line(R"({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":7}})");
  EXPECT_EQ(module.cancelled, std::vector<std::string>{"s1"});
  for (const auto& m : transport.sent) EXPECT_TRUE(m.as_object().contains("id")) << "a notification is never answered: " << m;
}

TEST_F(BinderTest, OutgoingNotificationIsEncoded) {
  acp::OutgoingNotification<Greeting> greet(conn, "test/greet");
  greet(Greeting{"hi"});
  ASSERT_FALSE(transport.sent.empty());
  EXPECT_EQ(transport.sent.back(), json::parse(R"({"jsonrpc":"2.0","method":"test/greet","params":{"text":"hi"}})"));
}

}  // namespace

namespace {

// A module whose method checks the request's head before the whole is decoded.
struct Checked {
  acp::Binder binder;
  int calls = 0;
  explicit Checked(acp::Connection& conn) : binder(conn) {
    binder.method("test/prompt", this, &Checked::check, &Checked::prompt);
    binder.initialized();
  }
  void check(const schema::SessionRef& head) {
    if (head.sessionId != "known") throw acp::RpcError(acp::error_code::kResourceNotFound, "Unknown session: " + head.sessionId);
  }
  acp::awaitable<acp::EmptyResponse> prompt(schema::PromptRequest, acp::RequestContext) {
    ++calls;
    co_return acp::EmptyResponse{};
  }
};

TEST(BinderHead, TheHeadIsCheckedBeforeTheWholeIsDecoded) {
  boost::asio::io_context ioc;
  MemoryTransport transport;
  acp::Connection conn{ioc.get_executor(), transport};
  Checked module{conn};
  auto answer = [&](int id, const char* params) {
    conn.handle_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"test/prompt","params":)" + params + "}");
    ioc.restart();
    while (ioc.poll() > 0) {
    }
    return transport.sent.back();
  };
  EXPECT_EQ(answer(1, R"({"sessionId":"nobody","prompt":[]})").at("error").at("code"), -32002)
      << "an unknown session is refused before its (here invalid) prompt is decoded";
  EXPECT_EQ(answer(2, R"({"sessionId":"known","prompt":[]})").at("error").at("code"), -32602);
  EXPECT_EQ(answer(3, R"({"sessionId":"known","prompt":[{"type":"text","text":"hi"}]})").at("result"), json::object{});
  EXPECT_EQ(module.calls, 1);
}

}  // namespace
