#pragma once
// The name rules of skills, plugins, agents and MCP servers.
#include <string_view>

namespace runtime::engine {

// Skill / native plugin / agent names: lowercase letters, digits and single hyphens
// (`release-notes`, not `Release_Notes`, `-x`, `x-` or `a--b`).
bool is_kebab_name(std::string_view s);
// Agent Plugins 1.0 names: 1-64 chars of [a-z0-9.-], starting and ending alphanumeric, no
// `--`/`..`, and (as the OpenViking conformance test checks) no `-.` or `.-`.
bool is_agent_plugins_name(std::string_view s);
// MCP server ids: letters, digits, `-` and `_`, without `__` (it separates mcp__<id>__<tool>).
bool is_mcp_server_id(std::string_view s);

}  // namespace runtime::engine
