#pragma once
// Where a configured MCP server runs (DESIGN §10): on the session's default executor when its
// `executors:` lists it, else on the first one listed; a stdio server on an ssh executor is a
// local ssh process whose remote end runs the server in that executor's working directory; an
// http/sse server there is reached through a port forwarded over that executor's connection.
#include <boost/asio/awaitable.hpp>

#include <map>
#include <string>

#include "bridge/mcp/server_spec.hpp"
#include "runtime/agent/session.hpp"

namespace runtime {

std::string mcp_executor(const engine::McpServerConfig& config, const std::string& session_executor);

// What connecting the session's MCP executors found.
struct McpExecutorLinks {
  std::map<std::string, std::string> unreachable;  // executor id -> why it cannot be reached
  std::map<std::string, std::string> forwards;     // http/sse server id -> "127.0.0.1:<port>" forwarded there
  std::map<std::string, std::string> forward_errors;  // http/sse server id -> why its port was not forwarded
};

// Connects the executors (other than local) the session's servers run on, and forwards a local
// port to each http/sse server placed there (it is connected from that machine).
boost::asio::awaitable<McpExecutorLinks> connect_mcp_executors(const Session& session);

// `spec` (from spec_from_config) moved onto its executor: unchanged on local; through ssh on an
// ssh executor (connected first): a stdio server is an ssh process, an http/sse one dials its
// forwarded port. Throws ExecutorError when it cannot run there.
bridge::mcp::ServerSpec place_mcp_server(bridge::mcp::ServerSpec spec, const engine::McpServerConfig& config,
                                         const Session& session, const McpExecutorLinks& links);

}  // namespace runtime
