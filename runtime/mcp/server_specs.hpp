#pragma once
// A server from mcp_servers/*.yaml or a plugin, as the MCP client needs it.
#include <filesystem>

#include "bridge/mcp/server_spec.hpp"
#include "runtime/engine/engine.hpp"

namespace runtime::mcp {

// Stdio servers without their own `cwd` start in `session_cwd`.
bridge::mcp::ServerSpec spec_from_config(const engine::McpServerConfig& config, const std::filesystem::path& session_cwd);

}  // namespace runtime::mcp
