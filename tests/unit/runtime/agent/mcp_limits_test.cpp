// What an MCP server may put before the model (config.yaml max_mcp_tools_per_server and
// max_mcp_output_bytes): a server in the editor (MCP over ACP) with many tools and a huge result.
#include <gtest/gtest.h>

#include <boost/asio/post.hpp>

#include "acp/connection.hpp"
#include "acp/methods.hpp"
#include "acp/transport.hpp"
#include "bridge/mcp/acp_tunnel.hpp"
#include "fakes.hpp"
#include "runtime/mcp/mcp_manager.hpp"
#include "runtime/tools/mcp_tool.hpp"

namespace asio = boost::asio;
namespace json = boost::json;
using runtime::mcp::McpManager;

namespace {

// Delivers each line to the other connection on the io thread, as the stdio transport would.
class Pipe : public acp::Transport {
 public:
  explicit Pipe(asio::io_context& ioc) : ioc_(ioc) {}
  acp::Connection* peer = nullptr;
  void send(std::string line) override {
    asio::post(ioc_, [this, line = std::move(line)] {
      if (peer) peer->handle_line(line);
    });
  }

 private:
  asio::io_context& ioc_;
};

class McpLimitsTest : public ::testing::Test {
 protected:
  McpLimitsTest() {
    to_editor.peer = &editor;
    to_agent.peer = &agent;
    editor.on_request(acp::methods::kMcpMessage, [this](json::value p, acp::RequestContext) -> acp::awaitable<json::value> {
      const auto& o = p.as_object();
      co_return serve(std::string(o.at("method").as_string()));
    });
  }

  // `tool_count` tools t0..; each answers `result_bytes` bytes of text.
  json::value serve(const std::string& method) {
    if (method == "tools/list") {
      json::array tools;
      for (int i = 0; i < tool_count; ++i)
        tools.push_back(json::object{{"name", "t" + std::to_string(i)}, {"inputSchema", json::object{{"type", "object"}}}});
      return json::object{{"result", json::object{{"tools", std::move(tools)}}}};
    }
    if (method == "tools/call") {
      json::object text{{"type", "text"}, {"text", "HEAD" + std::string(result_bytes, 'x') + "TAIL"}};
      return json::object{{"result", json::object{{"content", json::array{std::move(text)}}}}};
    }
    return json::object{{"result", json::object{}}};
  }

  std::shared_ptr<McpManager> manager() {
    bridge::mcp::ServerSpec spec;
    spec.id = "ed";
    spec.transport = bridge::mcp::AcpSpec{"editor-tools"};
    McpManager::Deps deps{ioc.get_executor(), bridge::mcp::TransportDeps{&agent, &router, {}}, {"/work"}, nullptr};
    return std::make_shared<McpManager>(std::move(deps), std::vector<bridge::mcp::ServerSpec>{spec});
  }

  int tool_count = 3;
  std::size_t result_bytes = 10;
  asio::io_context ioc;
  asio::thread_pool pool{1};
  Pipe to_editor{ioc}, to_agent{ioc};
  acp::Connection agent{ioc.get_executor(), to_editor};
  acp::Connection editor{ioc.get_executor(), to_agent};
  bridge::mcp::AcpTunnelRouter router{agent};
  fakes::FakeEditor host;
};

}  // namespace

TEST_F(McpLimitsTest, AServerOffersAtMostItsLimitOfToolsAndTheUserIsToldOnce) {
  tool_count = 7;
  auto mcp = manager();
  support::CancelSource cancel;
  runtime::config::McpLimits limits;
  limits.tools_per_server = 5;
  auto tools = fakes::run(ioc, mcp->tools_for_turn(&cancel, nullptr, limits));
  ASSERT_EQ(tools.size(), 5u) << "7 tools, a limit of 5: the first 5 are offered";
  EXPECT_EQ(tools[4]->name(), "mcp__ed__t4");
  auto warnings = mcp->take_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("'ed'"), std::string::npos) << "names the server: " << warnings[0];
  EXPECT_NE(warnings[0].find("offers 7 tools"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("2 are left out"), std::string::npos) << "says how many were dropped: " << warnings[0];
  EXPECT_NE(warnings[0].find("max_mcp_tools_per_server"), std::string::npos) << "and how to change it: " << warnings[0];

  fakes::run(ioc, mcp->tools_for_turn(&cancel, nullptr, limits));
  EXPECT_TRUE(mcp->take_warnings().empty()) << "told once per session, not every turn";
  EXPECT_EQ(fakes::run(ioc, mcp->tools_for_turn(&cancel)).size(), 7u) << "the default limit (500) leaves 7 alone";
  fakes::run(ioc, mcp->close());
  pool.join();
}

TEST_F(McpLimitsTest, AResultReachesTheModelAndTheEditorsContentCutButRawOutputWhole) {
  result_bytes = 50'000;
  auto mcp = manager();
  support::CancelSource cancel;
  runtime::config::McpLimits limits;
  limits.output_bytes = 1000;
  auto tools = fakes::run(ioc, mcp->tools_for_turn(&cancel, nullptr, limits));
  ASSERT_FALSE(tools.empty());
  fakes::AllowingContext ctx(host, pool);
  auto r = fakes::run(ioc, tools[0]->run(ctx, json::object{}));
  EXPECT_EQ(r.text.rfind("HEADxxx", 0), 0u) << "the model gets the start";
  EXPECT_EQ(r.text.find("TAIL"), std::string::npos) << "not the rest";
  EXPECT_NE(r.text.find("cut: it is 50008 bytes, the first 1000"), std::string::npos) << r.text.substr(1000);
  EXPECT_LT(r.text.size(), 1500u);
  ASSERT_EQ(r.content.size(), 1u);
  const auto& shown = std::get<runtime::TextContent>(r.content[0]).text;
  EXPECT_LT(shown.size(), 1200u) << "the editor's content (journaled with the call) is cut too";
  EXPECT_NE(shown.find("rawOutput"), std::string::npos) << shown.substr(1000);
  EXPECT_NE(json::serialize(r.raw_output).find("TAIL"), std::string::npos) << "rawOutput is the one whole copy";
  fakes::run(ioc, mcp->close());
  pool.join();
}

TEST(MapMcpResult, ImagesOverTheLimitAreNamedInTheEditorsContent) {
  json::object image{{"type", "image"}, {"data", std::string(4000, 'A')}, {"mimeType", "image/png"}};
  json::object small{{"type", "text"}, {"text", "caption"}};
  auto r = runtime::tools::map_mcp_result(json::object{{"content", json::array{small, image}}}, 1000);
  ASSERT_EQ(r.content.size(), 2u);
  EXPECT_EQ(std::get<runtime::TextContent>(r.content[0]).text, "caption");
  const auto* named = std::get_if<runtime::TextContent>(&r.content[1]);
  ASSERT_TRUE(named) << "a 4 KB image over a 1 KB limit is not kept in the content";
  EXPECT_NE(named->text.find("image left out"), std::string::npos) << named->text;
  EXPECT_NE(r.text.find("[image image/png, 3000 bytes]"), std::string::npos) << "the model's text names it as before: " << r.text;
}
