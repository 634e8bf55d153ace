// String helpers with one meaning for the whole program.
#include "support/text.hpp"

namespace support {

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string replace_all(std::string_view s, std::string_view needle, std::string_view with) {
  std::string out;
  if (needle.empty()) return std::string(s);
  std::size_t pos = 0;
  while (true) {
    auto hit = s.find(needle, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(with);
    pos = hit + needle.size();
  }
  out.append(s.substr(pos));
  return out;
}

}  // namespace support
