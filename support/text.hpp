#pragma once
// String helpers with one meaning for the whole program.
#include <cstddef>
#include <string>
#include <string_view>

namespace support {

// `s` without leading and trailing spaces, tabs, CRs and LFs.
std::string trim(std::string_view s);

// Replaces every occurrence of `needle` with `with` in one pass (what is inserted is never
// searched again).
std::string replace_all(std::string_view s, std::string_view needle, std::string_view with);

// The length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlong forms,
// no surrogates, nothing past U+10FFFF), or 0 when it starts with an ill-formed one.
std::size_t utf8_sequence_length(std::string_view s);

// The longest prefix of `s` of at most `max` bytes that does not end inside a UTF-8 sequence
// (a cut there would leave a broken character).
std::size_t utf8_prefix_length(std::string_view s, std::size_t max);

// Makes `s` valid UTF-8 in place: each byte that does not start a well-formed sequence becomes
// U+FFFD. Returns whether anything changed. Cheap when `s` is already valid (one pass, no copy).
// Text from files, commands and models may be anything; what we send as JSON must be UTF-8.
bool repair_utf8(std::string& s);

}  // namespace support
