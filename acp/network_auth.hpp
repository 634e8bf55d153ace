#pragma once
// Who may talk to `openvaala acp --listen`: the bearer token read from the user's token file,
// the check of each request's Authorization header, and the start-up rule that a server
// reachable from other machines must have a token.
#include <optional>
#include <string>
#include <string_view>

namespace acp {

// The token file's text with surrounding whitespace trimmed. Throws std::runtime_error (a
// message for the user) when the file cannot be read, is empty, or is readable or writable by
// anyone but its owner (its mode must be 0600): a token others can read guards nothing.
std::string read_token_file(const std::string& path);

// True when `authorization` (the whole header value) is exactly "Bearer <token>". Compared in
// constant time: the time taken must not tell an attacker how much of a guess was right.
// An empty `token` means no token is configured: every request is let in (loopback only).
bool bearer_matches(std::string_view authorization, std::string_view token);

// HOST:PORT (HOST may be a name such as localhost, an IPv4 address, or [IPv6]); nullopt when
// it does not parse.
struct ListenAddress {
  std::string host;
  unsigned short port = 0;
};
std::optional<ListenAddress> parse_listen_address(std::string_view text);

}  // namespace acp
