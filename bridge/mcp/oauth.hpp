#pragma once
// The pure parts of MCP authorization (OAuth 2.1 as the MCP authorization spec uses it): PKCE
// (RFC 7636, S256), the `WWW-Authenticate: Bearer` challenge, where the metadata lives (RFC 9728
// protected resource metadata, RFC 8414 authorization server metadata with the OpenID Connect
// fallbacks), what that metadata and a token response say, and the authorization URL with the
// `resource` parameter (RFC 8707). No I/O here: oauth_flow.cpp does the requests.
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bridge::mcp::oauth {

// Malformed metadata or a refusal by the authorization server; the message never holds a token.
struct OAuthError : std::runtime_error {
  explicit OAuthError(const std::string& m, std::string code = {}) : std::runtime_error(m), error_code(std::move(code)) {}
  std::string error_code;  // the OAuth `error` (invalid_grant, ...) when the server sent one
};

std::string base64url(std::string_view bytes);  // no padding
std::string random_token(std::size_t bytes);    // base64url of that many random bytes
std::string pkce_verifier();                    // 43 characters of [A-Za-z0-9-_]
std::string pkce_challenge(std::string_view verifier);  // base64url(SHA-256(verifier))

struct BearerChallenge {
  std::string resource_metadata;  // URL of the protected resource metadata, if given
  std::string scope;
  std::string error;              // invalid_token, insufficient_scope, ...
};
// Parses a `WWW-Authenticate` value; nullopt when it has no Bearer challenge.
std::optional<BearerChallenge> parse_www_authenticate(std::string_view header);

// Where to look, in order, for the protected resource metadata of an MCP server URL (RFC 9728
// §3.1: the path-inserted well-known URL, then the root one).
std::vector<std::string> resource_metadata_urls(const std::string& server_url);
// Where to look, in order, for an authorization server's metadata (MCP authorization spec:
// OAuth with path insertion, OpenID Connect with path insertion, OpenID Connect appended).
std::vector<std::string> auth_server_metadata_urls(const std::string& issuer);
// The canonical resource identifier of an MCP server (RFC 8707): the URL without fragment,
// scheme and host in lower case.
std::string canonical_resource(const std::string& server_url);
// scheme://host[:port] of a URL; empty when it is not an http(s) URL.
std::string origin_of(const std::string& url);

struct ResourceMetadata {
  std::string resource;
  std::vector<std::string> authorization_servers;
  std::vector<std::string> scopes_supported;
};
ResourceMetadata parse_resource_metadata(const boost::json::value& v);  // throws OAuthError

struct AuthServerMetadata {
  std::string issuer;
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string registration_endpoint;  // empty: no dynamic client registration
  std::string revocation_endpoint;
  std::vector<std::string> scopes_supported;
  std::vector<std::string> token_endpoint_auth_methods;
};
// Throws OAuthError when an endpoint is missing or S256 PKCE is not offered.
AuthServerMetadata parse_auth_server_metadata(const boost::json::value& v);

struct Tokens {
  std::string access_token;
  std::string refresh_token;   // empty: none
  std::int64_t expires_at = 0;  // unix seconds; 0: unknown
  std::string scope;
};
// A token endpoint's JSON answer; `now` in unix seconds. Throws OAuthError (with the server's
// `error` code) for an error answer or one without an access token.
Tokens parse_token_response(const boost::json::value& v, std::int64_t now);

// application/x-www-form-urlencoded
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields);

struct AuthorizationRequest {
  std::string authorization_endpoint;
  std::string client_id;
  std::string redirect_uri;
  std::string code_challenge;
  std::string state;
  std::string scope;     // empty: none sent
  std::string resource;  // RFC 8707
};
std::string authorization_url(const AuthorizationRequest& r);

// The query parameters of a redirect target such as `/callback?code=...&state=...`.
std::vector<std::pair<std::string, std::string>> query_params(std::string_view target);

}  // namespace bridge::mcp::oauth
