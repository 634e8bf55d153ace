#pragma once
// The editor's MCP servers (acp::schema::McpServer, decoded from session/new, load, resume and
// fork) as ServerSpecs: the server id the model sees is the sanitized `name` (two entries with
// one id are an error), http(s) URLs are checked, and the transports this agent does not offer
// are refused. Errors are acp::RpcError -32602 naming the field ("mcpServers[1].url must be an
// http(s) URL, got 'ftp://x'").
#include <boost/json.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "acp/schema/mcp_server.hpp"
#include "bridge/mcp/server_spec.hpp"

namespace runtime::server {

struct AcpServerOptions {
  bool allow_http = true;
  bool allow_sse = true;
  bool allow_acp = true;
  std::chrono::milliseconds startup_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds tool_timeout{std::chrono::seconds(300)};
  std::string cwd;  // stdio servers start here (the session's folder)
};

std::vector<bridge::mcp::ServerSpec> mcp_server_specs(const std::vector<acp::schema::McpServer>& servers,
                                                      const AcpServerOptions& options = {});
// The same from the `mcpServers` JSON (null = none), decoded by acp::schema first.
std::vector<bridge::mcp::ServerSpec> parse_acp_mcp_servers(const boost::json::value& value, const AcpServerOptions& options = {});

}  // namespace runtime::server
