#pragma once
// Who may talk to `openvaala acp --listen`: the bearer token read from the user's token file,
// the check of each request's Authorization header, and the start-up rule that a server
// reachable from other machines must have a token.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acp {

// The token file's text with surrounding whitespace trimmed. Throws std::runtime_error (a
// message for the user) when the file cannot be read, is empty, or is readable or writable by
// anyone but its owner (its mode must be 0600): a token others can read guards nothing.
std::string read_token_file(const std::string& path);

// True when `authorization` (the whole header value) is exactly "Bearer <token>". Compared in
// constant time: the time taken must not tell an attacker how much of a guess was right.
// An empty `token` means no token is configured: every request is let in (loopback only).
bool bearer_matches(std::string_view authorization, std::string_view token);

// The browser path of the WebSocket profile: browsers cannot set Authorization on a WebSocket,
// but they can offer subprotocols. True when `protocols` (the Sec-WebSocket-Protocol header, a
// comma-separated list) holds "acp.bearer.<token>" (constant-time, as bearer_matches). The server
// answers with the protocol "acp" (which the client offers beside it), so the token is never
// sent back, and it is never put in a URL.
inline constexpr std::string_view kBearerSubprotocolPrefix = "acp.bearer.";
inline constexpr std::string_view kAcpSubprotocol = "acp";
bool subprotocol_bearer_matches(std::string_view protocols, std::string_view token);
// Whether `protocols` (as above) offers `name` itself.
bool offers_subprotocol(std::string_view protocols, std::string_view name);

// Whether a request with Origin `origin` may go on: no Origin (not a browser) always may; a
// browser's only when its origin (scheme://host[:port], compared case-insensitively) is one of
// `allowed` (--allow-origin; a trailing '/' there is ignored). No allow-list: no browser.
bool origin_allowed(std::string_view origin, const std::vector<std::string>& allowed);

// HOST:PORT (HOST may be a name such as localhost, an IPv4 address, or [IPv6]); nullopt when
// it does not parse.
struct ListenAddress {
  std::string host;
  unsigned short port = 0;
};
std::optional<ListenAddress> parse_listen_address(std::string_view text);

}  // namespace acp
