// String helpers with one meaning for the whole program.
#include "support/text.hpp"

#include <cstdint>
#include <cstring>

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

std::size_t utf8_prefix_length(std::string_view s, std::size_t max) {
  if (max >= s.size()) return s.size();
  std::size_t n = max;
  // Back to the start of the sequence s[n] belongs to (at most 3 continuation bytes).
  for (int i = 0; i < 3 && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80; ++i) --n;
  return n;
}

std::size_t utf8_sequence_length(std::string_view s) {
  if (s.empty()) return 0;
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) return 1;
  std::size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < len) return 0;
  const auto b1 = static_cast<unsigned char>(s[1]);
  if (b1 < lo || b1 > hi) return 0;
  for (std::size_t k = 2; k < len; ++k)
    if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80) return 0;
  return len;
}

bool repair_utf8(std::string& s) {
  std::size_t i = 0;
  // Fast path: valid text, which is nearly all of it; ASCII eight bytes at a time (every message
  // the server sends goes through here).
  while (i < s.size()) {
    if (std::uint64_t word; s.size() - i >= 8 && (std::memcpy(&word, s.data() + i, 8), (word & 0x8080808080808080ull) == 0)) {
      i += 8;
      continue;
    }
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(std::string_view(s).substr(i));
    if (n == 0) break;
    i += n;
  }
  if (i == s.size()) return false;
  std::string out;
  out.reserve(s.size() + 16);
  out.append(s, 0, i);
  while (i < s.size()) {
    const std::size_t n = utf8_sequence_length(std::string_view(s).substr(i));
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  s = std::move(out);
  return true;
}

}  // namespace support
