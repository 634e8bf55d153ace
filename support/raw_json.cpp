#include "support/raw_json.hpp"

#include <array>
#include <cstring>

namespace support::raw_json {

namespace {

constexpr bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Bytes a string's scan must stop at: its end, an escape, a raw control character.
constexpr std::array<bool, 256> kStringStop = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = true;
  t['"'] = true;
  t['\\'] = true;
  return t;
}();

constexpr bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A cursor over the text; each scan returns false at the first thing that is not valid JSON.
struct Scanner {
  const char* p;
  const char* end;

  void skip_space() {
    while (p < end && is_space(*p)) ++p;
  }

  bool literal(const char* word) {
    const std::size_t n = std::strlen(word);
    if (static_cast<std::size_t>(end - p) < n || std::memcmp(p, word, n) != 0) return false;
    p += n;
    return true;
  }

  // At the opening quote; leaves `p` past the closing one.
  bool string() {
    ++p;
    for (;;) {
      while (p < end && !kStringStop[static_cast<unsigned char>(*p)]) ++p;
      if (p >= end) return false;
      const char c = *p++;
      if (c == '"') return true;
      if (c != '\\' || p >= end) return false;  // a raw control character, or a cut escape
      const char e = *p++;
      if (e == 'u') {
        if (end - p < 4 || !is_hex(p[0]) || !is_hex(p[1]) || !is_hex(p[2]) || !is_hex(p[3])) return false;
        p += 4;
      } else if (!std::strchr("\"\\/bfnrt", e) || e == '\0') {
        return false;
      }
    }
  }

  bool digits() {
    if (p >= end || !is_digit(*p)) return false;
    while (p < end && is_digit(*p)) ++p;
    return true;
  }

  bool number() {
    if (*p == '-') ++p;
    if (p < end && *p == '0') ++p;
    else if (!digits()) return false;
    if (p < end && *p == '.') {
      ++p;
      if (!digits()) return false;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
      ++p;
      if (p < end && (*p == '+' || *p == '-')) ++p;
      if (!digits()) return false;
    }
    return true;
  }

  // One value, whitespace before it included.
  bool value(int depth) {
    skip_space();
    if (p >= end) return false;
    switch (*p) {
      case '"': return string();
      case '{': return object(depth + 1, nullptr);
      case '[': return array(depth + 1, nullptr);
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return (*p == '-' || is_digit(*p)) && number();
    }
  }

  using MemberFn = std::function<bool(std::string_view, std::string_view)>;
  using ElementFn = std::function<bool(std::string_view)>;

  // At '{'; calls `member` (when given) with each member's key and value text.
  bool object(int depth, const MemberFn* member) {
    if (depth > kMaxDepth) return false;
    ++p;
    skip_space();
    if (p < end && *p == '}') return ++p, true;
    for (;;) {
      skip_space();
      if (p >= end || *p != '"') return false;
      const char* key = p + 1;
      if (!string()) return false;
      const std::string_view name(key, static_cast<std::size_t>(p - 1 - key));
      skip_space();
      if (p >= end || *p++ != ':') return false;
      skip_space();
      const char* start = p;
      if (!value(depth)) return false;
      if (member && !(*member)(name, std::string_view(start, static_cast<std::size_t>(p - start)))) return false;
      skip_space();
      if (p >= end) return false;
      const char c = *p++;
      if (c == '}') return true;
      if (c != ',') return false;
    }
  }

  bool array(int depth, const ElementFn* element) {
    if (depth > kMaxDepth) return false;
    ++p;
    skip_space();
    if (p < end && *p == ']') return ++p, true;
    for (;;) {
      skip_space();
      const char* start = p;
      if (!value(depth)) return false;
      if (element && !(*element)(std::string_view(start, static_cast<std::size_t>(p - start)))) return false;
      skip_space();
      if (p >= end) return false;
      const char c = *p++;
      if (c == ']') return true;
      if (c != ',') return false;
    }
  }

  // Only whitespace left.
  bool at_end() {
    skip_space();
    return p == end;
  }
};

Scanner scanner_for(std::string_view text) { return Scanner{text.data(), text.data() + text.size()}; }

}  // namespace

std::size_t value_length(std::string_view text) {
  Scanner s = scanner_for(text);
  return s.value(0) ? static_cast<std::size_t>(s.p - text.data()) : 0;
}

bool is_value(std::string_view text) {
  Scanner s = scanner_for(text);
  return s.value(0) && s.at_end();
}

bool for_each_member(std::string_view text, const std::function<bool(std::string_view, std::string_view)>& member) {
  Scanner s = scanner_for(text);
  s.skip_space();
  return s.p < s.end && *s.p == '{' && s.object(1, &member) && s.at_end();
}

bool for_each_element(std::string_view text, const std::function<bool(std::string_view)>& element) {
  Scanner s = scanner_for(text);
  s.skip_space();
  return s.p < s.end && *s.p == '[' && s.array(1, &element) && s.at_end();
}

}  // namespace support::raw_json
