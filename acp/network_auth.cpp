#include "acp/network_auth.hpp"

#include <sys/stat.h>

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
  // Every byte of the token is looked at whatever the guess: no early exit.
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (std::size_t i = 0; i < token.size(); ++i)
    diff |= static_cast<unsigned char>(token[i] ^ (i < given.size() ? given[i] : 0));
  return scheme_ok && diff == 0;
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
