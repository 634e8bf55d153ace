#include "bridge/mcp/oauth.hpp"
#include "support/json_read.hpp"

#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <boost/url.hpp>
#include <cctype>

namespace bridge::mcp::oauth {

namespace json = boost::json;
namespace urls = boost::urls;

std::string base64url(std::string_view bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::size_t i = 0;
  auto at = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned n = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    for (int s : {18, 12, 6, 0}) out += kAlphabet[(n >> s) & 63];
  }
  if (bytes.size() - i == 1) {
    const unsigned n = at(i) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
  } else if (bytes.size() - i == 2) {
    const unsigned n = (at(i) << 16) | (at(i + 1) << 8);
    for (int s : {18, 12, 6}) out += kAlphabet[(n >> s) & 63];
  }
  return out;
}

std::string random_token(std::size_t n) {
  std::string bytes(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(n)) != 1)
    throw OAuthError("no random bytes from OpenSSL");
  return base64url(bytes);
}

std::string pkce_verifier() { return random_token(32); }

std::string pkce_challenge(std::string_view verifier) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size(), digest);
  return base64url(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::optional<BearerChallenge> parse_www_authenticate(std::string_view h) {
  // Find the Bearer scheme (case-insensitive) at the start or after a comma/space.
  std::string lower(h);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::size_t pos = std::string::npos;
  for (std::size_t p = lower.find("bearer"); p != std::string::npos; p = lower.find("bearer", p + 1)) {
    const bool start_ok = p == 0 || lower[p - 1] == ' ' || lower[p - 1] == ',';
    const bool end_ok = p + 6 == lower.size() || lower[p + 6] == ' ' || lower[p + 6] == ',';
    if (start_ok && end_ok) {
      pos = p + 6;
      break;
    }
  }
  if (pos == std::string::npos) return std::nullopt;
  BearerChallenge c;
  std::size_t i = pos;
  auto skip = [&] {
    while (i < h.size() && (h[i] == ' ' || h[i] == ',' || h[i] == '\t')) ++i;
  };
  for (;;) {
    skip();
    std::size_t name_start = i;
    while (i < h.size() && h[i] != '=' && h[i] != ' ' && h[i] != ',') ++i;
    std::string name(lower.substr(name_start, i - name_start));
    if (name.empty() || i >= h.size() || h[i] != '=') break;  // end, or the next scheme
    ++i;
    std::string value;
    if (i < h.size() && h[i] == '"') {
      ++i;
      while (i < h.size() && h[i] != '"') {
        if (h[i] == '\\' && i + 1 < h.size()) ++i;
        value += h[i++];
      }
      ++i;
    } else {
      while (i < h.size() && h[i] != ',' && h[i] != ' ') value += h[i++];
    }
    if (name == "resource_metadata") c.resource_metadata = value;
    else if (name == "scope") c.scope = value;
    else if (name == "error") c.error = value;
  }
  return c;
}

namespace {

std::string path_of(const urls::url_view& u) {
  std::string p(u.encoded_path());
  while (!p.empty() && p.back() == '/') p.pop_back();
  return p;
}

urls::url_view parse_http(const std::string& s) {
  auto u = urls::parse_uri(s);
  if (!u || (u->scheme() != "http" && u->scheme() != "https")) throw OAuthError("not an http(s) URL: " + s);
  return *u;
}

std::vector<std::string> strings_of(const json::object& o, const char* key) {
  std::vector<std::string> out;
  if (auto* a = o.if_contains(key); a && a->is_array())
    for (const auto& v : a->as_array())
      if (v.is_string()) out.emplace_back(v.as_string());
  return out;
}

}  // namespace

std::string origin_of(const std::string& url) {
  auto u = urls::parse_uri(url);
  if (!u || (u->scheme() != "http" && u->scheme() != "https")) return {};
  return std::string(u->scheme()) + "://" + std::string(u->encoded_authority());
}

std::vector<std::string> resource_metadata_urls(const std::string& server_url) {
  auto u = parse_http(server_url);
  const std::string origin = origin_of(server_url);
  const std::string path = path_of(u);
  std::vector<std::string> out;
  if (!path.empty()) out.push_back(origin + "/.well-known/oauth-protected-resource" + path);
  out.push_back(origin + "/.well-known/oauth-protected-resource");
  return out;
}

std::vector<std::string> auth_server_metadata_urls(const std::string& issuer) {
  auto u = parse_http(issuer);
  const std::string origin = origin_of(issuer);
  const std::string path = path_of(u);
  if (path.empty()) return {origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"};
  return {origin + "/.well-known/oauth-authorization-server" + path, origin + "/.well-known/openid-configuration" + path,
          origin + path + "/.well-known/openid-configuration"};
}

std::string canonical_resource(const std::string& server_url) {
  auto parsed = urls::parse_uri(server_url);
  if (!parsed) return server_url;
  urls::url u(*parsed);
  u.remove_fragment();
  std::string scheme(u.scheme());
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string host(u.encoded_host());
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  u.set_scheme(scheme);
  u.set_encoded_host(host);
  return std::string(u.buffer());
}

ResourceMetadata parse_resource_metadata(const json::value& v) {
  if (!v.is_object()) throw OAuthError("the protected resource metadata is not a JSON object");
  const auto& o = v.as_object();
  ResourceMetadata m{std::string(support::str_at(o, "resource")), strings_of(o, "authorization_servers"), strings_of(o, "scopes_supported")};
  if (m.authorization_servers.empty())
    throw OAuthError("the protected resource metadata names no authorization server (authorization_servers)");
  return m;
}

AuthServerMetadata parse_auth_server_metadata(const json::value& v) {
  if (!v.is_object()) throw OAuthError("the authorization server metadata is not a JSON object");
  const auto& o = v.as_object();
  AuthServerMetadata m;
  m.issuer = std::string(support::str_at(o, "issuer"));
  m.authorization_endpoint = std::string(support::str_at(o, "authorization_endpoint"));
  m.token_endpoint = std::string(support::str_at(o, "token_endpoint"));
  m.registration_endpoint = std::string(support::str_at(o, "registration_endpoint"));
  m.revocation_endpoint = std::string(support::str_at(o, "revocation_endpoint"));
  m.scopes_supported = strings_of(o, "scopes_supported");
  m.token_endpoint_auth_methods = strings_of(o, "token_endpoint_auth_methods_supported");
  if (m.authorization_endpoint.empty() || m.token_endpoint.empty())
    throw OAuthError("the authorization server metadata lacks authorization_endpoint or token_endpoint");
  auto methods = strings_of(o, "code_challenge_methods_supported");
  // The MCP spec requires S256 and says to refuse servers that do not list it.
  if (std::find(methods.begin(), methods.end(), "S256") == methods.end())
    throw OAuthError("the authorization server does not offer PKCE with S256 (code_challenge_methods_supported)");
  return m;
}

Tokens parse_token_response(const json::value& v, std::int64_t now) {
  if (!v.is_object()) throw OAuthError("the token endpoint did not answer a JSON object");
  const auto& o = v.as_object();
  if (auto err = std::string(support::str_at(o, "error")); !err.empty()) {
    auto desc = std::string(support::str_at(o, "error_description"));
    throw OAuthError("the authorization server refused: " + err + (desc.empty() ? "" : " (" + desc + ")"), err);
  }
  Tokens t;
  t.access_token = std::string(support::str_at(o, "access_token"));
  if (t.access_token.empty()) throw OAuthError("the token endpoint's answer has no access_token");
  t.refresh_token = std::string(support::str_at(o, "refresh_token"));
  t.scope = std::string(support::str_at(o, "scope"));
  if (auto* e = o.if_contains("expires_in")) {
    if (e->is_int64()) t.expires_at = now + e->as_int64();
    else if (e->is_uint64()) t.expires_at = now + static_cast<std::int64_t>(e->as_uint64());
    else if (e->is_double()) t.expires_at = now + static_cast<std::int64_t>(e->as_double());
  }
  return t;
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields) {
  urls::url u;
  auto params = u.params();
  for (const auto& [k, v] : fields) params.append({k, v});
  std::string s(u.encoded_query());
  // URL query encoding leaves '+' alone; in a form body it means a space.
  std::string out;
  for (char c : s) out += c == '+' ? std::string("%2B") : std::string(1, c);
  return out;
}

std::string authorization_url(const AuthorizationRequest& r) {
  urls::url u(parse_http(r.authorization_endpoint));
  auto p = u.params();
  p.set("response_type", "code");
  p.set("client_id", r.client_id);
  p.set("redirect_uri", r.redirect_uri);
  p.set("code_challenge", r.code_challenge);
  p.set("code_challenge_method", "S256");
  p.set("state", r.state);
  if (!r.scope.empty()) p.set("scope", r.scope);
  if (!r.resource.empty()) p.set("resource", r.resource);
  return std::string(u.buffer());
}

std::vector<std::pair<std::string, std::string>> query_params(std::string_view target) {
  std::vector<std::pair<std::string, std::string>> out;
  auto u = urls::parse_origin_form(target);
  if (!u) return out;
  for (auto p : u->params()) out.emplace_back(p.key, p.value);
  return out;
}

}  // namespace bridge::mcp::oauth
