#pragma once
// String helpers with one meaning for the whole program.
#include <string>
#include <string_view>

namespace support {

// `s` without leading and trailing spaces, tabs, CRs and LFs.
std::string trim(std::string_view s);

// Replaces every occurrence of `needle` with `with` in one pass (what is inserted is never
// searched again).
std::string replace_all(std::string_view s, std::string_view needle, std::string_view with);

}  // namespace support
