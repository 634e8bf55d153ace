#pragma once
// Where a configured MCP server runs (DESIGN §10): on the session's default executor when its
// `executors:` lists it, else on the first one listed; a stdio server on an ssh executor is a
// local ssh process whose remote end runs the server in that executor's working directory.
#include <boost/asio/awaitable.hpp>

#include <map>
#include <string>

#include "bridge/mcp/server_spec.hpp"
#include "runtime/agent/session.hpp"

namespace runtime {

std::string mcp_executor(const engine::McpServerConfig& config, const std::string& session_executor);

// Connects the executors (other than local) the session's servers run on; answers why not, by id.
boost::asio::awaitable<std::map<std::string, std::string>> connect_mcp_executors(const Session& session);

// `spec` (from spec_from_config) moved onto its executor: unchanged on local; through ssh on an
// ssh executor (connected first). Throws ExecutorError when it cannot run there.
bridge::mcp::ServerSpec place_mcp_server(bridge::mcp::ServerSpec spec, const engine::McpServerConfig& config,
                                         const Session& session);

}  // namespace runtime
