// session/new's mcpServers parameter as server specs.
#include <gtest/gtest.h>

#include "acp/rpc_error.hpp"
#include "runtime/server/mcp_servers_param.hpp"

using namespace bridge::mcp;
using runtime::server::parse_acp_mcp_servers;
namespace json = boost::json;

// ---- ACP session/new mcpServers ----

namespace {
std::string parse_error(const char* text) {
  try {
    parse_acp_mcp_servers(json::parse(text));
  } catch (const acp::RpcError& e) {
    EXPECT_EQ(e.code(), -32602);
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(McpAcpServers, ParsesEveryType) {
  auto specs = parse_acp_mcp_servers(json::parse(R"([
    {"name": "fs", "command": "/usr/bin/mcp-fs", "args": ["/tmp"], "env": [{"name": "A", "value": "1"}]},
    {"type": "stdio", "name": "two", "command": "x", "args": [], "env": []},
    {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": [{"name": "Authorization", "value": "Bearer t"}]},
    {"type": "sse", "name": "old", "url": "http://127.0.0.1:3001/sse", "headers": []},
    {"type": "acp", "name": "editor tools", "serverId": "tools:1234"}
  ])"));
  ASSERT_EQ(specs.size(), 5u);
  auto& s0 = std::get<StdioSpec>(specs[0].transport);
  EXPECT_EQ(specs[0].id, "fs");
  EXPECT_EQ(s0.command, "/usr/bin/mcp-fs");
  EXPECT_EQ(s0.args, std::vector<std::string>{"/tmp"});
  ASSERT_EQ(s0.env.size(), 1u);
  EXPECT_EQ(s0.env[0].second, "1");
  EXPECT_EQ(std::get<HttpSpec>(specs[2].transport).headers[0].first, "Authorization");
  EXPECT_EQ(std::get<SseSpec>(specs[3].transport).url, "http://127.0.0.1:3001/sse");
  EXPECT_EQ(specs[4].id, "editor_tools");
  EXPECT_EQ(std::get<AcpSpec>(specs[4].transport).server_id, "tools:1234");
  EXPECT_TRUE(parse_acp_mcp_servers(json::value(nullptr)).empty());
}

TEST(McpAcpServers, ErrorsNameTheField) {
  EXPECT_EQ(parse_error(R"({"name":"x"})"), "Invalid params: mcpServers must be an array");
  EXPECT_EQ(parse_error(R"([{"command":"x"}])"), "Invalid params: mcpServers[0].name is required");
  EXPECT_EQ(parse_error(R"([{"name":"x"}])"), "Invalid params: mcpServers[0].command is required");
  EXPECT_EQ(parse_error(R"([{"name":"x","command":"c","args":[1]}])"), "Invalid params: mcpServers[0].args[0] must be a string");
  EXPECT_EQ(parse_error(R"([{"name":"x","command":"c","env":[{"name":"A"}]}])"),
            "Invalid params: mcpServers[0].env[0].value is required");
  EXPECT_EQ(parse_error(R"([{"type":"http","name":"x","url":"ftp://h/x","headers":[]}])"),
            "Invalid params: mcpServers[0].url must be an http(s) URL, got 'ftp://h/x'");
  EXPECT_EQ(parse_error(R"([{"type":"acp","name":"x"}])"), "Invalid params: mcpServers[0].serverId is required");
  EXPECT_EQ(parse_error(R"([{"type":"ws","name":"x"}])"),
            "Invalid params: mcpServers[0].type must be one of stdio, http, sse, acp; got 'ws'");
  EXPECT_EQ(parse_error(R"([{"name":"a","command":"c"},{"name":"a","command":"d"}])"),
            "Invalid params: mcpServers[1].name 'a' is used by another MCP server of this session");
}
