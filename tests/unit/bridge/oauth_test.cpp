// MCP OAuth: PKCE, the WWW-Authenticate challenge, where metadata lives, what it says, the
// authorization URL and the token store.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <filesystem>

#include "bridge/mcp/oauth.hpp"
#include "bridge/mcp/oauth_store.hpp"
#include "support/file_io.hpp"

namespace {

using namespace bridge::mcp::oauth;
namespace json = boost::json;
namespace fs = std::filesystem;

TEST(OAuthPkce, ChallengeIsBase64UrlSha256OfTheVerifier) {
  // RFC 7636 appendix B.
  EXPECT_EQ(pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  auto v = pkce_verifier();
  EXPECT_EQ(v.size(), 43u) << "a verifier of 32 random bytes is 43 base64url characters";
  EXPECT_EQ(v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"), std::string::npos);
  EXPECT_NE(pkce_verifier(), v) << "every sign-in gets a fresh verifier";
  EXPECT_EQ(base64url("f"), "Zg");
  EXPECT_EQ(base64url("fo"), "Zm8");
  EXPECT_EQ(base64url("foo"), "Zm9v");
  EXPECT_EQ(base64url("\xfb\xff"), "-_8");
}

TEST(OAuthChallenge, ParsesBearerParametersQuotedOrNot) {
  auto c = parse_www_authenticate(
      R"(Bearer error="invalid_token", error_description="No token", resource_metadata="http://h:1/.well-known/oauth-protected-resource/mcp", scope=mcp:tools)");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->error, "invalid_token");
  EXPECT_EQ(c->resource_metadata, "http://h:1/.well-known/oauth-protected-resource/mcp");
  EXPECT_EQ(c->scope, "mcp:tools");
  auto basic_then_bearer = parse_www_authenticate(R"(Basic realm="x", Bearer scope="a b")");
  ASSERT_TRUE(basic_then_bearer);
  EXPECT_EQ(basic_then_bearer->scope, "a b");
  EXPECT_FALSE(parse_www_authenticate(R"(Basic realm="bearer")"));
  EXPECT_TRUE(parse_www_authenticate("Bearer"));
}

TEST(OAuthDiscovery, WellKnownUrlsInTheSpecsOrder) {
  auto prm = resource_metadata_urls("https://example.com/public/mcp");
  ASSERT_EQ(prm.size(), 2u);
  EXPECT_EQ(prm[0], "https://example.com/.well-known/oauth-protected-resource/public/mcp");
  EXPECT_EQ(prm[1], "https://example.com/.well-known/oauth-protected-resource");
  EXPECT_EQ(resource_metadata_urls("http://127.0.0.1:8080").size(), 1u);

  auto as = auth_server_metadata_urls("https://auth.example.com/tenant1");
  ASSERT_EQ(as.size(), 3u);
  EXPECT_EQ(as[0], "https://auth.example.com/.well-known/oauth-authorization-server/tenant1");
  EXPECT_EQ(as[1], "https://auth.example.com/.well-known/openid-configuration/tenant1");
  EXPECT_EQ(as[2], "https://auth.example.com/tenant1/.well-known/openid-configuration");
  auto root = auth_server_metadata_urls("http://127.0.0.1:9/");
  ASSERT_EQ(root.size(), 2u);
  EXPECT_EQ(root[0], "http://127.0.0.1:9/.well-known/oauth-authorization-server");
  EXPECT_EQ(root[1], "http://127.0.0.1:9/.well-known/openid-configuration");

  EXPECT_EQ(canonical_resource("HTTPS://Example.COM/mcp#frag"), "https://example.com/mcp");
  EXPECT_EQ(origin_of("http://127.0.0.1:5/a/b?c"), "http://127.0.0.1:5");
}

TEST(OAuthMetadata, AuthServerMetadataNeedsEndpointsAndS256) {
  auto ok = parse_auth_server_metadata(json::parse(R"({"issuer":"http://a/","authorization_endpoint":"http://a/authorize",
      "token_endpoint":"http://a/token","registration_endpoint":"http://a/register","revocation_endpoint":"http://a/revoke",
      "code_challenge_methods_supported":["S256"],"scopes_supported":["mcp:tools"]})"));
  EXPECT_EQ(ok.token_endpoint, "http://a/token");
  EXPECT_EQ(ok.registration_endpoint, "http://a/register");
  EXPECT_EQ(ok.revocation_endpoint, "http://a/revoke");
  EXPECT_THROW(parse_auth_server_metadata(json::parse(
                   R"({"authorization_endpoint":"http://a/authorize","token_endpoint":"http://a/token","code_challenge_methods_supported":["plain"]})")),
               OAuthError)
      << "a server without S256 PKCE is refused";
  EXPECT_THROW(parse_auth_server_metadata(json::parse(R"({"token_endpoint":"x","code_challenge_methods_supported":["S256"]})")),
               OAuthError);
  auto prm = parse_resource_metadata(json::parse(R"({"resource":"http://r/mcp","authorization_servers":["http://a/"]})"));
  EXPECT_EQ(prm.authorization_servers.at(0), "http://a/");
  EXPECT_THROW(parse_resource_metadata(json::parse(R"({"resource":"x"})")), OAuthError);
}

TEST(OAuthTokens, TokenResponseAndErrors) {
  auto t = parse_token_response(json::parse(R"({"access_token":"A","refresh_token":"R","expires_in":30,"token_type":"bearer"})"), 1000);
  EXPECT_EQ(t.access_token, "A");
  EXPECT_EQ(t.refresh_token, "R");
  EXPECT_EQ(t.expires_at, 1030);
  try {
    parse_token_response(json::parse(R"({"error":"invalid_grant","error_description":"revoked"})"), 0);
    FAIL() << "an error answer must throw";
  } catch (const OAuthError& e) {
    EXPECT_EQ(e.error_code, "invalid_grant");
  }
  EXPECT_THROW(parse_token_response(json::parse(R"({"token_type":"bearer"})"), 0), OAuthError);
}

TEST(OAuthRequest, AuthorizationUrlCarriesPkceStateAndResource) {
  auto url = authorization_url({"http://a/authorize?x=1", "client 1", "http://127.0.0.1:5/callback", "CH", "ST",
                                "mcp:tools other", "http://r/mcp"});
  EXPECT_NE(url.find("x=1"), std::string::npos);
  EXPECT_NE(url.find("response_type=code"), std::string::npos);
  EXPECT_NE(url.find("code_challenge=CH"), std::string::npos);
  EXPECT_NE(url.find("code_challenge_method=S256"), std::string::npos);
  EXPECT_NE(url.find("state=ST"), std::string::npos);
  EXPECT_NE(url.find("resource=http"), std::string::npos);
  auto params = query_params(url.substr(url.find("/authorize")));
  bool saw_redirect = false, saw_scope = false;
  for (auto& [k, v] : params) {
    if (k == "redirect_uri") saw_redirect = v == "http://127.0.0.1:5/callback";
    if (k == "scope") saw_scope = v == "mcp:tools other";
  }
  EXPECT_TRUE(saw_redirect);
  EXPECT_TRUE(saw_scope);
  EXPECT_EQ(form_encode({{"a", "x y+z&"}, {"b", "1"}}), "a=x%20y%2Bz%26&b=1");
}

TEST(OAuthStore, SavesPrivatelyPerServerAndUrl) {
  auto dir = fs::temp_directory_path() / ("ov-oauth-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  TokenStore store(token_file(dir));
  EXPECT_FALSE(store.load("gh", "http://x/mcp"));
  StoredAuth a;
  a.url = "http://x/mcp";
  a.client_id = "cid";
  a.tokens.access_token = "secret-access";
  a.tokens.refresh_token = "secret-refresh";
  a.tokens.expires_at = 42;
  store.save("gh", a);
  struct stat st {};
  ASSERT_EQ(::stat(store.file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the token file must be private";
  auto back = store.load("gh", "http://x/mcp");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->tokens.refresh_token, "secret-refresh");
  EXPECT_EQ(back->tokens.expires_at, 42);
  EXPECT_FALSE(store.load("gh", "http://other/mcp")) << "an entry is only for the URL it was made for";
  EXPECT_FALSE(store.load("other", "http://x/mcp"));
  store.save("other", a);
  EXPECT_TRUE(store.erase("gh"));
  ASSERT_EQ(::stat(store.file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the token file stays private after an entry is removed";
  EXPECT_TRUE(store.load("other", "http://x/mcp")) << "removing one server keeps the others";
  EXPECT_FALSE(store.erase("gh"));
  EXPECT_FALSE(store.load("gh", "http://x/mcp"));
  support::write_file_atomically(store.file(), "not json", 0600);
  EXPECT_FALSE(store.load("gh", "http://x/mcp")) << "a broken file means signing in again";
  fs::remove_all(dir);
}

}  // namespace
