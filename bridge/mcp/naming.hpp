#pragma once
// Names the model sees for MCP tools: mcp__<server id>__<tool>, as Codex does.
#include <string>
#include <string_view>

namespace bridge::mcp {

inline constexpr std::size_t kMaxToolNameLength = 64;

// Every character outside [A-Za-z0-9_-] becomes '_'.
std::string sanitize_name(std::string_view s);
// mcp__<id>__<tool>, sanitized; over 64 characters it is cut and ends with the SHA-1 (hex) of
// the full name, so distinct long names stay distinct.
std::string qualified_tool_name(std::string_view server_id, std::string_view tool);

}  // namespace bridge::mcp
