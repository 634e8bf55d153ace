#pragma once
// The `mcpServers` of ACP `session/new` / `session/load` as ServerSpecs. Entries:
//   stdio: {name, command, args, env: [{name, value}]} with no "type" or "type": "stdio"
//   http / sse: {type, name, url, headers: [{name, value}]}
//   acp: {type: "acp", name, serverId}
// Errors are acp::RpcError -32602 naming the field ("mcpServers[1].url must be a string").
// The server id the model sees is the sanitized `name`; two entries with one name are an error.
#include <boost/json.hpp>
#include <chrono>
#include <string>
#include <vector>

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

// `value` is the mcpServers member (null/absent = none).
std::vector<bridge::mcp::ServerSpec> parse_acp_mcp_servers(const boost::json::value& value, const AcpServerOptions& options = {});

}  // namespace runtime::server
