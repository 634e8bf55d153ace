// acp/schema McpServer: each transport round-trips; bad entries name their path.
#include "acp/schema/mcp_server.hpp"

#include "schema_test_util.hpp"

namespace {

using namespace acp::schema;
using schema_test::decode;
using schema_test::decode_error;
namespace json = boost::json;

using Servers = std::vector<McpServer>;

std::string servers_error(const char* text) {
  try {
    Reader(json::parse(text), "mcpServers").as<Servers>();
  } catch (const acp::RpcError& e) {
    EXPECT_EQ(e.code(), -32602);
    return e.what();
  }
  return "(decoded)";
}

TEST(SchemaMcpServer, EachTransportRoundTrips) {
  const char* text = R"([
    {"name":"fs","command":"/usr/bin/mcp-fs","args":["/tmp"],"env":[{"name":"A","value":"1"}]},
    {"type":"http","name":"web","url":"https://example.com/mcp","headers":[{"name":"Authorization","value":"Bearer t"}]},
    {"type":"sse","name":"old","url":"http://127.0.0.1:3001/sse","headers":[]},
    {"type":"acp","name":"editor tools","serverId":"tools:1234"}
  ])";
  auto servers = decode<Servers>(text);
  ASSERT_EQ(servers.size(), 4u);
  EXPECT_EQ(servers[0].type, McpServer::Type::Stdio);
  EXPECT_EQ(std::get<McpServerStdio>(servers[0].value).env[0].second, "1");
  EXPECT_EQ(servers[2].type, McpServer::Type::Sse);
  EXPECT_EQ(std::get<McpServerAcp>(servers[3].value).serverId, "tools:1234");
  EXPECT_EQ(json::value_from(servers), json::parse(text));
  for (const auto& s : servers) schema_test::round_trip(s);
}

TEST(SchemaMcpServer, OlderShapesAndUnknownFields) {
  auto s = schema_test::decode<McpServer>(R"({"type":"stdio","name":"x","command":"c","env":{"A":"1"},"future":true})");
  const auto& stdio = std::get<McpServerStdio>(s.value);
  ASSERT_EQ(stdio.env.size(), 1u) << "env as a plain object (older clients)";
  EXPECT_EQ(stdio.env[0], (std::pair<std::string, std::string>{"A", "1"}));
  EXPECT_TRUE(stdio.args.empty());
}

// The messages session/new gave before the schema (tests/unit/runtime/server/mcp_servers_param_test.cpp).
TEST(SchemaMcpServer, ErrorsNameThePath) {
  EXPECT_EQ(servers_error(R"({"name":"x"})"), "Invalid params: mcpServers must be an array");
  EXPECT_EQ(servers_error(R"([1])"), "Invalid params: mcpServers[0] must be an object");
  EXPECT_EQ(servers_error(R"([{"command":"x"}])"), "Invalid params: mcpServers[0].name is required");
  EXPECT_EQ(servers_error(R"([{"name":""}])"), "Invalid params: mcpServers[0].name must not be empty");
  EXPECT_EQ(servers_error(R"([{"name":"x"}])"), "Invalid params: mcpServers[0].command is required");
  EXPECT_EQ(servers_error(R"([{"name":"a","command":"c"},{"name":"b","command":"c","args":[1]}])"),
            "Invalid params: mcpServers[1].args[0] must be a string");
  EXPECT_EQ(servers_error(R"([{"name":"x","command":"c","args":"a b"}])"),
            "Invalid params: mcpServers[0].args must be an array of strings");
  EXPECT_EQ(servers_error(R"([{"name":"x","command":"c","env":[{"name":"A"}]}])"),
            "Invalid params: mcpServers[0].env[0].value is required");
  EXPECT_EQ(servers_error(R"([{"name":"x","command":"c","env":{"A":1}}])"), "Invalid params: mcpServers[0].env.A must be a string");
  EXPECT_EQ(servers_error(R"([{"type":"http","name":"x"}])"), "Invalid params: mcpServers[0].url is required");
  EXPECT_EQ(servers_error(R"([{"type":"acp","name":"x"}])"), "Invalid params: mcpServers[0].serverId is required");
  EXPECT_EQ(servers_error(R"([{"type":"ws","name":"x"}])"),
            "Invalid params: mcpServers[0].type must be one of stdio, http, sse, acp; got 'ws'");
}

}  // namespace
