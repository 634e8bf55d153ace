// A session's MCP manager with a server that lives in the editor, reached through the ACP
// connection (MCP over ACP): two in-memory connections, the editor's side scripted here.
#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "acp/connection.hpp"
#include "acp/methods.hpp"
#include "acp/transport.hpp"
#include "bridge/mcp/acp_tunnel.hpp"
#include "fakes.hpp"
#include "runtime/mcp/mcp_manager.hpp"

namespace asio = boost::asio;
namespace json = boost::json;
using runtime::mcp::McpManager;

namespace {

// Delivers each line to the other connection on the io thread, as the stdio transport would.
class Pipe : public acp::Transport {
 public:
  Pipe(asio::io_context& ioc) : ioc_(ioc) {}
  acp::Connection* peer = nullptr;
  void send(std::string line) override {
    asio::post(ioc_, [this, line = std::move(line)] {
      if (peer) peer->handle_line(line);
    });
  }

 private:
  asio::io_context& ioc_;
};

class McpTunnelTest : public ::testing::Test {
 protected:
  McpTunnelTest() {
    to_editor.peer = &editor;
    to_agent.peer = &agent;
    // The editor's MCP server, in the stateless MCP-over-ACP form: one mcp/message per request.
    editor.on_request(acp::methods::kMcpMessage, [this](json::value p, acp::RequestContext) -> acp::awaitable<json::value> {
      const auto& o = p.as_object();
      seen_methods.push_back(std::string(o.at("method").as_string()));
      if (answer_delay.count() > 0 && seen_methods.size() == 1) {  // a server slow to come up
        asio::steady_timer slow(ioc, answer_delay);
        co_await slow.async_wait(asio::use_awaitable);
      }
      const json::object* params = o.contains("params") ? o.at("params").if_object() : nullptr;
      const json::value* meta = params ? params->if_contains("_meta") : nullptr;
      seen_meta.push_back(meta && meta->is_object() ? meta->as_object() : json::object{});
      co_return serve(std::string(o.at("method").as_string()), o.contains("params") ? o.at("params").as_object() : json::object{});
    });
  }

  json::value serve(const std::string& method, const json::object& params) {
    if (method == "tools/list") {
      auto tool = [](const char* name) {
        return json::object{{"name", name}, {"inputSchema", json::object{{"type", "object"}}}};
      };
      json::object listing{{"tools", json::array{tool("echo"), tool("strict")}}};
      return json::object{{"result", std::move(listing)}};
    }
    if (method == "tools/call") {
      if (params.at("name") == "strict")
        return json::object{{"error", json::object{{"code", -32602}, {"message", "strict wants a number"}}}};
      json::object text{{"type", "text"}, {"text", json::serialize(params.at("arguments"))}};
      json::object result{{"content", json::array{std::move(text)}}};
      return json::object{{"result", std::move(result)}};
    }
    if (method == "server/discover" && features) {
      json::object caps{{"tools", json::object{}}, {"prompts", json::object{}}, {"resources", json::object{}}};
      json::object info{{"name", "editor-tools"}, {"version", "1"}};
      return json::object{{"result", json::object{{"supportedVersions", json::array{"2026-07-28"}},
                                                   {"capabilities", std::move(caps)}, {"serverInfo", std::move(info)}}}};
    }
    if (method == "prompts/list") {
      json::object prompt{{"name", "review"}, {"description", "Review a file"}};
      return json::object{{"result", json::object{{"prompts", json::array{std::move(prompt)}}}}};
    }
    if (method == "server/discover")  // an editor whose provider does not know it
      return json::object{{"error", json::object{{"code", -32601}, {"message", "Method not found"}}}};
    return json::object{{"result", json::object{}}};  // ping and the rest
  }

  std::shared_ptr<McpManager> manager(bool required = false) {
    bridge::mcp::ServerSpec spec;
    spec.id = "ed";
    spec.transport = bridge::mcp::AcpSpec{"editor-tools"};
    spec.required = required;
    McpManager::Deps deps{ioc.get_executor(), bridge::mcp::TransportDeps{&agent, &router, {}}, {"/work"}, nullptr};
    return std::make_shared<McpManager>(std::move(deps), std::vector<bridge::mcp::ServerSpec>{spec});
  }

  std::string call(runtime::tools::Tool& tool, json::object args) {
    fakes::AllowingContext ctx(host, pool);
    auto r = fakes::run(ioc, tool.run(ctx, args));
    return r.text;
  }

  asio::io_context ioc;
  asio::thread_pool pool{1};
  Pipe to_editor{ioc}, to_agent{ioc};
  acp::Connection agent{ioc.get_executor(), to_editor};
  acp::Connection editor{ioc.get_executor(), to_agent};
  bridge::mcp::AcpTunnelRouter router{agent};
  fakes::FakeEditor host;
  bool features = false;  // server/discover says it has prompts and resources
  std::chrono::milliseconds answer_delay{0};  // before the editor answers its first request
  std::vector<std::string> seen_methods;
  std::vector<json::object> seen_meta;  // the MCP request's _meta of each mcp/message
};

}  // namespace

TEST_F(McpTunnelTest, AnEditorServersToolsReachTheModelAndItsCallsGoThroughTheEditor) {
  auto mcp = manager();
  support::CancelSource cancel;
  auto tools = fakes::run(ioc, mcp->tools_for_turn(&cancel));
  ASSERT_EQ(tools.size(), 2u) << "the editor's server offers two tools";
  EXPECT_EQ(tools[0]->name(), "mcp__ed__echo") << "tools are named mcp__<server>__<tool>";
  EXPECT_EQ(call(*tools[0], json::object{{"word", "hi"}}), R"({"word":"hi"})")
      << "the call's arguments reach the editor's server and its answer reaches the model";
  EXPECT_NE(std::find(seen_methods.begin(), seen_methods.end(), "tools/call"), seen_methods.end());
  fakes::run(ioc, mcp->close());
  pool.join();
}

TEST_F(McpTunnelTest, TheEditorServersErrorCodeReachesTheModelUnchanged) {
  auto mcp = manager();
  support::CancelSource cancel;
  auto tools = fakes::run(ioc, mcp->tools_for_turn(&cancel));
  ASSERT_EQ(tools.size(), 2u);
  auto text = call(*tools[1], json::object{});
  EXPECT_NE(text.find("strict wants a number"), std::string::npos) << text;
  EXPECT_NE(text.find("(code -32602)"), std::string::npos)
      << "the MCP error code the editor's server answered must survive the tunnel, got: " << text;
  fakes::run(ioc, mcp->close());
  pool.join();
}

TEST_F(McpTunnelTest, ARequiredServerTheEditorCannotReachFailsTheTurnNamingIt) {
  editor.on_request(acp::methods::kMcpMessage, [](json::value, acp::RequestContext) -> acp::awaitable<json::value> {
    throw acp::RpcError(-32603, "no such server in the editor");
    co_return json::value();
  });
  auto mcp = manager(/*required=*/true);
  support::CancelSource cancel;
  try {
    fakes::run(ioc, mcp->tools_for_turn(&cancel));
    FAIL() << "a required server that cannot be reached must fail the turn";
  } catch (const runtime::mcp::RequiredServerUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("'ed'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no such server in the editor"), std::string::npos) << e.what();
  }
  fakes::run(ioc, mcp->close());
  pool.join();
}

// The editor's MCP server never sees an MCP initialize in the stateless form: each request says
// which MCP version and client it comes from in its _meta.
TEST_F(McpTunnelTest, EachStatelessRequestCarriesTheMcpVersionAndClient) {
  auto mcp = manager();
  support::CancelSource cancel;
  auto tools = fakes::run(ioc, mcp->tools_for_turn(&cancel));
  ASSERT_EQ(tools.size(), 2u);
  call(*tools[0], json::object{{"word", "hi"}});
  ASSERT_EQ(seen_meta.size(), seen_methods.size());
  ASSERT_FALSE(seen_meta.empty());
  for (std::size_t i = 0; i < seen_meta.size(); ++i) {
    const auto* version = seen_meta[i].if_contains(bridge::mcp::kMetaProtocolVersion);
    EXPECT_TRUE(version && version->is_string() && !version->as_string().empty())
        << seen_methods[i] << " must carry the MCP protocol version in _meta, got " << json::serialize(seen_meta[i]);
    const auto* client = seen_meta[i].if_contains(bridge::mcp::kMetaClientInfo);
    EXPECT_TRUE(client && client->is_object() && client->as_object().contains("name"))
        << seen_methods[i] << " must name the MCP client in _meta, got " << json::serialize(seen_meta[i]);
  }
  fakes::run(ioc, mcp->close());
  pool.join();
}

// Its server/discover answer (the stateless form's initialize) decides, as over stdio, whether
// its prompts become slash commands and its resources tools for the model.
TEST_F(McpTunnelTest, AnEditorServersPromptsAndResourcesAreUsedAsOverStdio) {
  features = true;
  auto mcp = manager();
  support::CancelSource cancel;
  auto tools = fakes::run(ioc, mcp->tools_for_turn(&cancel));
  std::vector<std::string> names;
  for (auto& t : tools) names.push_back(t->name());
  EXPECT_NE(std::find(names.begin(), names.end(), "list_mcp_resources"), names.end()) << testing::PrintToString(names);
  EXPECT_NE(std::find(names.begin(), names.end(), "read_mcp_resource"), names.end()) << testing::PrintToString(names);
  auto commands = mcp->prompt_commands();
  ASSERT_EQ(commands.size(), 1u) << "prompts/list was asked because server/discover says it has prompts";
  EXPECT_EQ(commands[0].name, "mcp__ed__review");
  fakes::run(ioc, mcp->close());
  pool.join();
}

TEST_F(McpTunnelTest, AnEditorWithoutServerDiscoverStillGivesItsTools) {
  auto mcp = manager();
  support::CancelSource cancel;
  auto tools = fakes::run(ioc, mcp->tools_for_turn(&cancel));
  ASSERT_EQ(tools.size(), 2u) << "its tools, and nothing asked of what it did not say it has";
  EXPECT_TRUE(mcp->prompt_commands().empty());
  EXPECT_EQ(std::count(seen_methods.begin(), seen_methods.end(), "prompts/list"), 0);
  fakes::run(ioc, mcp->close());
  pool.join();
}

// A slow optional server does not hold the turn's first model request: the turn goes on without
// it after the bound and it joins at a later request; a required one is waited for.
TEST_F(McpTunnelTest, AnOptionalServerSlowToStartJoinsTheTurnLater) {
  answer_delay = std::chrono::milliseconds(400);
  auto mcp = manager();
  mcp->start_all();
  support::CancelSource cancel;
  McpManager::TurnOffer offer;
  auto tools = fakes::run(ioc, mcp->tools_for_turn(&cancel, nullptr, {}, std::chrono::milliseconds(20), &offer));
  EXPECT_TRUE(tools.empty()) << "the turn went on without the server still starting";
  EXPECT_EQ(offer.late, std::vector<std::string>{"ed"});
  // (run() returned once the server had come up)
  auto joined = mcp->join_late(offer);
  EXPECT_EQ(joined.servers, std::vector<std::string>{"ed"});
  ASSERT_EQ(joined.tools.size(), 2u) << "its tools join at the next model request";
  EXPECT_EQ(joined.tools[0]->name(), "mcp__ed__echo");
  EXPECT_TRUE(offer.late.empty());
  EXPECT_TRUE(mcp->join_late(offer).tools.empty()) << "a server joins once";
  fakes::run(ioc, mcp->close());
  pool.join();
}

TEST_F(McpTunnelTest, ARequiredServerSlowToStartIsWaitedFor) {
  answer_delay = std::chrono::milliseconds(300);
  auto mcp = manager(/*required=*/true);
  mcp->start_all();  // as at session/new: it is starting when the turn begins
  support::CancelSource cancel;
  McpManager::TurnOffer offer;
  auto tools = fakes::run(ioc, mcp->tools_for_turn(&cancel, nullptr, {}, std::chrono::milliseconds(20), &offer));
  EXPECT_EQ(tools.size(), 2u) << "a required server must be up before the model is asked";
  EXPECT_TRUE(offer.late.empty());
  fakes::run(ioc, mcp->close());
  pool.join();
}
