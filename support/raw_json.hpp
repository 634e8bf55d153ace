#pragma once
// JSON read without being decoded: the text of a value, checked, and the members of an object or
// the elements of an array as the text they were written as. For passing JSON on unchanged (a
// saved session's text replayed to the editor) at the cost of one scan, where parsing it into
// values and serialising them again would decode and re-encode every string.
//
// Checked means the grammar: brackets, commas and colons, string escapes, no raw control
// characters in strings, numbers and literals, nesting up to kMaxDepth. Not UTF-8: a string's
// bytes are passed on as they are, and what sends them repairs them (support::repair_utf8).
#include <cstddef>
#include <functional>
#include <string_view>

namespace support::raw_json {

inline constexpr int kMaxDepth = 64;

// The length of the one JSON value `text` starts with (after any leading whitespace), counting
// that whitespace; 0 when it does not start with a valid value.
std::size_t value_length(std::string_view text);

// Whether `text` is exactly one valid JSON value, with only whitespace around it.
bool is_value(std::string_view text);

// Calls `member(key, value)` for each member of the object `text` is, in order: `key` is the
// name's text between its quotes (escapes left as written), `value` the member's value text.
// Returns false when `text` is not exactly one valid object (members may have been visited by
// then) or when `member` returned false.
bool for_each_member(std::string_view text, const std::function<bool(std::string_view key, std::string_view value)>& member);

// The same for the elements of an array.
bool for_each_element(std::string_view text, const std::function<bool(std::string_view element)>& element);

}  // namespace support::raw_json
