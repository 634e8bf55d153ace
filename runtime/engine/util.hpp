#pragma once
// Small helpers shared by the engine's loaders: name rules, bounded file reads, path containment
// and line lookup in JSON text.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace runtime::engine {

namespace fs = std::filesystem;

// Skill / native plugin / agent names: lowercase letters, digits and single hyphens
// (`release-notes`, not `Release_Notes`, `-x`, `x-` or `a--b`).
bool is_kebab_name(std::string_view s);
// Agent Plugins 1.0 names: 1-64 chars of [a-z0-9.-], starting and ending alphanumeric, no
// `--`/`..`, and (as the OpenViking conformance test checks) no `-.` or `.-`.
bool is_agent_plugins_name(std::string_view s);
// MCP server ids: letters, digits, `-` and `_`, without `__` (it separates mcp__<id>__<tool>).
bool is_mcp_server_id(std::string_view s);

// The file's size in bytes, or nullopt when it is not a regular file (after symlinks).
std::optional<std::uintmax_t> regular_file_size(const fs::path& p);

// `p` (already absolute) lies inside `root` after resolving symlinks of the existing part.
// Both are resolved with weakly_canonical.
bool path_within(const fs::path& root, const fs::path& p);

// 1-based line of byte offset `off` in `text`.
int line_at_offset(std::string_view text, std::size_t off);
// 1-based line of the first `"key"` that is followed by `:` (a JSON member name), searching
// from `from` (a byte offset); 0 when absent.
int json_key_line(std::string_view text, std::string_view key, std::size_t from = 0);

// Replaces every occurrence of `needle` with `with` in one pass (no recursion).
std::string replace_all(std::string_view s, std::string_view needle, std::string_view with);

std::string trim(std::string_view s);

// `~/x` → $HOME/x; other paths unchanged.
fs::path expand_home(const std::string& p, const fs::path& home);

}  // namespace runtime::engine
