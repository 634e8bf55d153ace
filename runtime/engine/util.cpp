#include "runtime/engine/util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace runtime::engine {

static bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool is_kebab_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  if (!lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  char prev = 0;
  for (char c : s) {
    if (c == '-') {
      if (prev == '-') return false;
    } else if (!lower_alnum(c)) {
      return false;
    }
    prev = c;
  }
  return true;
}

bool is_agent_plugins_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  if (!lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  char prev = 0;
  for (char c : s) {
    bool sep = c == '-' || c == '.';
    if (sep) {
      if (prev == '-' || prev == '.') return false;
    } else if (!lower_alnum(c)) {
      return false;
    }
    prev = c;
  }
  return true;
}

bool is_mcp_server_id(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
      return false;
  return s.find("__") == std::string_view::npos;
}


std::optional<std::uintmax_t> regular_file_size(const fs::path& p) {
  struct stat st{};
  if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<std::uintmax_t>(st.st_size);
}

bool path_within(const fs::path& root, const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(root, ec);
  if (ec) r = root.lexically_normal();
  fs::path q = fs::weakly_canonical(p, ec);
  if (ec) q = p.lexically_normal();
  auto rel = q.lexically_relative(r);
  if (rel.empty()) return false;
  auto first = *rel.begin();
  return first != "..";
}

int line_at_offset(std::string_view text, std::size_t off) {
  if (off > text.size()) off = text.size();
  int line = 1;
  for (std::size_t i = 0; i < off; ++i)
    if (text[i] == '\n') ++line;
  return line;
}

int json_key_line(std::string_view text, std::string_view key, std::size_t from) {
  std::string quoted = "\"" + std::string(key) + "\"";
  std::size_t pos = from;
  while ((pos = text.find(quoted, pos)) != std::string_view::npos) {
    std::size_t after = pos + quoted.size();
    while (after < text.size() && (text[after] == ' ' || text[after] == '\t' || text[after] == '\r' || text[after] == '\n'))
      ++after;
    if (after < text.size() && text[after] == ':') return line_at_offset(text, pos);
    pos += quoted.size();
  }
  return 0;
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

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

fs::path expand_home(const std::string& p, const fs::path& home) {
  if (p == "~") return home;
  if (p.rfind("~/", 0) == 0) return home / p.substr(2);
  return p;
}

}  // namespace runtime::engine
