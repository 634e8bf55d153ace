// The name rules of skills, plugins, agents and MCP servers.
#include "runtime/engine/names.hpp"

namespace runtime::engine {

namespace {

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// 1-64 lowercase letters and digits in runs joined by single separators from `separators`,
// starting and ending with a letter or digit.
bool is_separated_name(std::string_view s, std::string_view separators) {
  if (s.empty() || s.size() > 64) return false;
  if (!lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  bool after_separator = false;
  for (char c : s) {
    const bool separator = separators.find(c) != std::string_view::npos;
    if (!separator && !lower_alnum(c)) return false;
    if (separator && after_separator) return false;
    after_separator = separator;
  }
  return true;
}

}  // namespace

bool is_kebab_name(std::string_view s) { return is_separated_name(s, "-"); }

bool is_agent_plugins_name(std::string_view s) { return is_separated_name(s, "-."); }

bool is_mcp_server_id(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
      return false;
  return s.find("__") == std::string_view::npos;
}

}  // namespace runtime::engine
