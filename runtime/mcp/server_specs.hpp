#pragma once
// A server from mcp_servers/*.yaml or a plugin, as the MCP client needs it.
#include <filesystem>

#include "bridge/mcp/oauth_flow.hpp"
#include "bridge/mcp/server_spec.hpp"
#include "runtime/engine/engine.hpp"

namespace runtime::mcp {

// Stdio servers without their own `cwd` start in `session_cwd`.
// An http/sse server gets the process's Authorizer for its id and URL (one per server, so
// sessions share its tokens and refreshes), keeping tokens in <config root>/mcp_tokens.json.
bridge::mcp::ServerSpec spec_from_config(const engine::McpServerConfig& config, const std::filesystem::path& session_cwd);

// The Authorizer of a configured http/sse server (shared while anyone holds it).
std::shared_ptr<bridge::mcp::oauth::Authorizer> authorizer_for(const engine::McpServerConfig& config);

// An http/sse server the editor passed in session/new signs in like a configured one (tokens
// under its name and URL), unless the editor sends its own Authorization header.
void add_oauth_to_editor_server(bridge::mcp::ServerSpec& spec);

}  // namespace runtime::mcp
