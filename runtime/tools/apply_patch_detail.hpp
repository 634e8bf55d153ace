#pragma once
// Internal to the apply_patch parser and matcher: whitespace as both read it.
#include <string_view>

namespace runtime::tools::patch_detail {

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

inline std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

inline std::string_view trim(std::string_view s) {
  s = trim_right(s);
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}

}  // namespace runtime::tools::patch_detail
