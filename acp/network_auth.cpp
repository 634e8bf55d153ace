#include "acp/network_auth.hpp"

#include <sys/stat.h>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace acp {

namespace {

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n\f\v";
  const auto first = s.find_first_not_of(ws);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(ws) - first + 1);
}

// Every byte of the token is looked at whatever the guess: no early exit, so the time taken
// does not tell an attacker how much of a guess was right.
bool same_secret(std::string_view given, std::string_view token) {
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (std::size_t i = 0; i < token.size(); ++i)
    diff |= static_cast<unsigned char>(token[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

// Calls `fn` with each trimmed item of a comma-separated header value until it returns true.
template <class Fn>
bool any_item(std::string_view list, Fn fn) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (fn(trim(list.substr(0, comma)))) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string read_token_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error("cannot read the token file " + path);
  if ((st.st_mode & 0777) != 0600) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    throw std::runtime_error("the token file " + path + " has mode " + mode +
                             "; it must be 0600 (chmod 600 " + path + ") so that only you can read it");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the token file " + path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string token(trim(text.str()));
  if (token.empty()) throw std::runtime_error("the token file " + path + " is empty");
  return token;
}

bool bearer_matches(std::string_view authorization, std::string_view token) {
  if (token.empty()) return true;
  constexpr std::string_view kScheme = "Bearer ";
  const bool scheme_ok = authorization.substr(0, kScheme.size()) == kScheme;
  const std::string_view given = scheme_ok ? authorization.substr(kScheme.size()) : std::string_view{};
  return same_secret(given, token) && scheme_ok;
}

bool subprotocol_bearer_matches(std::string_view protocols, std::string_view token) {
  if (token.empty()) return false;  // no token: bearer_matches already let everyone in
  return any_item(protocols, [&](std::string_view item) {
    return item.substr(0, kBearerSubprotocolPrefix.size()) == kBearerSubprotocolPrefix &&
           same_secret(item.substr(kBearerSubprotocolPrefix.size()), token);
  });
}

bool offers_subprotocol(std::string_view protocols, std::string_view name) {
  return any_item(protocols, [&](std::string_view item) { return item == name; });
}

bool origin_allowed(std::string_view origin, const std::vector<std::string>& allowed) {
  const std::string given = lowercase(origin);
  for (std::string_view entry : allowed) {
    while (!entry.empty() && entry.back() == '/') entry.remove_suffix(1);
    if (lowercase(entry) == given) return true;
  }
  return false;
}

std::optional<ListenAddress> parse_listen_address(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return std::nullopt;
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return std::nullopt;  // an IPv6 address must be bracketed
  }
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535 || port_text.empty())
    return std::nullopt;
  return ListenAddress{std::string(host), static_cast<unsigned short>(port)};
}

}  // namespace acp
