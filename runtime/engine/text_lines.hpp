#pragma once
// Line numbers of places in a file's text, for `path:line:` diagnostics.
#include <cstddef>
#include <string_view>

namespace runtime::engine {

// 1-based line of byte offset `off` in `text`.
int line_at_offset(std::string_view text, std::size_t off);
// 1-based line of the first `"key"` that is followed by `:` (a JSON member name), searching
// from `from` (a byte offset); 0 when absent.
int json_key_line(std::string_view text, std::string_view key, std::size_t from = 0);

}  // namespace runtime::engine
