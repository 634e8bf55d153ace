// Times (journal timestamps) and titles of saved sessions.
#include <chrono>
#include <cstdio>
#include <ctime>

#include "runtime/sessions/session_store.hpp"

namespace runtime::sessions {

// ---- Time ----

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string iso8601(std::int64_t ms) {
  std::int64_t secs = ms / 1000;
  int frac = static_cast<int>(ms % 1000);
  if (frac < 0) {
    frac += 1000;
    secs -= 1;
  }
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

std::optional<std::int64_t> parse_iso8601(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.fff]Z
  auto digits = [&](std::size_t pos, std::size_t n) -> std::optional<int> {
    if (pos + n > s.size()) return std::nullopt;
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      s[13] != ':' || s[16] != ':')
    return std::nullopt;
  auto Y = digits(0, 4), M = digits(5, 2), D = digits(8, 2), h = digits(11, 2), m = digits(14, 2),
       sec = digits(17, 2);
  if (!Y || !M || !D || !h || !m || !sec || *M < 1 || *M > 12 || *D < 1 || *D > 31 || *h > 23 || *m > 59 ||
      *sec > 60)
    return std::nullopt;
  std::size_t pos = 19;
  int ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int scale = 100, n = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      ms += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
      ++n;
    }
    if (n == 0) return std::nullopt;
  }
  if (pos + 1 != s.size() || (s[pos] != 'Z' && s[pos] != 'z')) return std::nullopt;
  std::tm tm{};
  tm.tm_year = *Y - 1900;
  tm.tm_mon = *M - 1;
  tm.tm_mday = *D;
  tm.tm_hour = *h;
  tm.tm_min = *m;
  tm.tm_sec = *sec;
  const std::time_t t = ::timegm(&tm);
  return static_cast<std::int64_t>(t) * 1000 + ms;
}

// ---- Titles ----

std::string title_from_text(std::string_view text, std::size_t max_chars) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
  std::string_view line;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view l = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    while (!l.empty() && blank(l.front())) l.remove_prefix(1);
    while (!l.empty() && blank(l.back())) l.remove_suffix(1);
    if (!l.empty()) {
      line = l;
      break;
    }
  }
  // Cut at max_chars code points (a code point starts at a byte that is not 10xxxxxx).
  std::size_t cps = 0, i = 0;
  for (; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) {
      if (cps == max_chars) break;
      ++cps;
    }
  }
  if (i == line.size()) return std::string(line);
  std::string_view cut = line.substr(0, i);
  while (!cut.empty() && blank(cut.back())) cut.remove_suffix(1);
  return std::string(cut) + "\xE2\x80\xA6";  // …
}

}  // namespace runtime::sessions
