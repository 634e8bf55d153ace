#include "bridge/mcp/oauth_flow.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "bridge/http/http_client.hpp"
#include "bridge/mcp/errors.hpp"
#include "bridge/mcp/oauth_redirect.hpp"

namespace bridge::mcp::oauth {

namespace asio = boost::asio;
namespace json = boost::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

const char* auth_state_name(AuthState s) {
  switch (s) {
    case AuthState::None: return "none";
    case AuthState::SignedIn: return "signed-in";
    case AuthState::Expired: return "expired";
    case AuthState::NeedsSignIn: return "needs sign-in";
  }
  return "none";
}

// Where and how to sign in: the authorization server's metadata, the resource and the scope.
struct SignInTarget {
  AuthServerMetadata meta;
  std::string resource;
  std::string scope;
};

namespace {

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

constexpr std::int64_t kRefreshAhead = 60;  // refresh a token that expires within a minute

json::value parse_json(const SmallResponse& r, const std::string& what) {
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec) throw OAuthError(what + " is not JSON (HTTP " + std::to_string(r.status) + ")");
  return v;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

// Client authentication at the token endpoint: a secret goes in the body unless the server
// only takes HTTP Basic.
void add_client_auth(Headers& headers, std::vector<std::pair<std::string, std::string>>& form, const std::string& id,
                     const std::string& secret, const std::vector<std::string>& methods) {
  const bool basic_only = std::find(methods.begin(), methods.end(), "client_secret_basic") != methods.end() &&
                          std::find(methods.begin(), methods.end(), "client_secret_post") == methods.end();
  if (!secret.empty() && basic_only) {
    std::string raw = id + ":" + secret;
    std::string b64 = base64url(raw);
    std::replace(b64.begin(), b64.end(), '-', '+');
    std::replace(b64.begin(), b64.end(), '_', '/');
    while (b64.size() % 4) b64 += '=';
    headers.emplace_back("Authorization", "Basic " + b64);
    return;
  }
  form.emplace_back("client_id", id);
  if (!secret.empty()) form.emplace_back("client_secret", secret);
}

asio::awaitable<Tokens> token_request(const std::string& endpoint, std::vector<std::pair<std::string, std::string>> form,
                                      Headers headers, support::CancelSource* cancel) {
  headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  headers.emplace_back("Accept", "application/json");
  auto r = co_await small_request("POST", endpoint, std::move(headers), form_encode(form), cancel);
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec) throw OAuthError("the token endpoint answered HTTP " + std::to_string(r.status) + " without JSON");
  if (r.status / 100 != 2 && !(v.is_object() && v.as_object().contains("error")))
    throw OAuthError("the token endpoint answered HTTP " + std::to_string(r.status));
  co_return parse_token_response(v, now_seconds());
}

// The first of `urls` that answers 200 with JSON; nullopt when none does.
asio::awaitable<std::optional<json::value>> first_json(const std::vector<std::string>& urls, support::CancelSource* cancel) {
  for (const auto& u : urls) {
    Headers headers;
    headers.emplace_back("Accept", "application/json");
    headers.emplace_back("MCP-Protocol-Version", "2025-06-18");
    auto r = co_await small_request("GET", u, std::move(headers), "", cancel);
    if (r.status != 200) continue;
    boost::system::error_code ec;
    auto v = json::parse(r.body, ec);
    if (!ec && v.is_object()) co_return v;
  }
  co_return std::nullopt;
}

// Steps 1 and 2 of a sign-in: the protected resource metadata (where the 401 said, else the
// well-known URLs), then the authorization server metadata.
asio::awaitable<SignInTarget> discover_sign_in(const std::string& server_url, const std::string& last_challenge,
                                               const std::optional<ClientConfig>& client, support::CancelSource* cancel) {
  auto challenge = parse_www_authenticate(last_challenge);
  if (!challenge) {  // not seen a 401 yet (`mcp login`): ask the server
    Headers headers;
    headers.emplace_back("Content-Type", "application/json");
    headers.emplace_back("Accept", "application/json, text/event-stream");
    auto probe = co_await small_request("POST", server_url, std::move(headers),
                                        R"({"jsonrpc":"2.0","id":0,"method":"ping"})", cancel);
    if (probe.status == 401) challenge = parse_www_authenticate(probe.www_authenticate);
  }
  std::vector<std::string> prm_urls;
  if (challenge && !challenge->resource_metadata.empty()) prm_urls.push_back(challenge->resource_metadata);
  for (auto& u : resource_metadata_urls(server_url)) prm_urls.push_back(u);
  std::string issuer = origin_of(server_url);  // 2025-03-26 servers: the MCP server is its own
  SignInTarget target;
  target.resource = canonical_resource(server_url);
  std::vector<std::string> scopes_supported;
  if (auto prm = co_await first_json(prm_urls, cancel)) {
    auto m = parse_resource_metadata(*prm);
    issuer = m.authorization_servers.front();
    if (!m.resource.empty()) target.resource = m.resource;
    scopes_supported = m.scopes_supported;
  }
  auto asm_json = co_await first_json(auth_server_metadata_urls(issuer), cancel);
  if (!asm_json) throw OAuthError("found no authorization server metadata for " + issuer);
  target.meta = parse_auth_server_metadata(*asm_json);
  target.scope = client && !client->scopes.empty() ? join(client->scopes)
                 : challenge && !challenge->scope.empty() ? challenge->scope
                                                          : join(scopes_supported);
  co_return target;
}

// Dynamic client registration (RFC 7591) for redirects to `a.redirect_uri`: fills in the client.
asio::awaitable<void> register_client(const SignInTarget& target, StoredAuth& a, support::CancelSource* cancel) {
  const auto& endpoint = target.meta.registration_endpoint;
  json::object reg;
  reg["client_name"] = "OpenVaala";
  reg["redirect_uris"] = json::array{json::string(a.redirect_uri)};
  reg["grant_types"] = json::array{json::string("authorization_code"), json::string("refresh_token")};
  reg["response_types"] = json::array{json::string("code")};
  reg["token_endpoint_auth_method"] = "none";
  if (!target.scope.empty()) reg["scope"] = target.scope;
  Headers headers;
  headers.emplace_back("Content-Type", "application/json");
  headers.emplace_back("Accept", "application/json");
  auto r = co_await small_request("POST", endpoint, std::move(headers), json::serialize(reg), cancel);
  if (r.status / 100 != 2)
    throw OAuthError("dynamic client registration at " + endpoint + " answered HTTP " + std::to_string(r.status));
  auto v = parse_json(r, "the client registration answer");
  auto* id = v.is_object() ? v.as_object().if_contains("client_id") : nullptr;
  if (!id || !id->is_string()) throw OAuthError("the client registration answer has no client_id");
  a.client_id = std::string(id->as_string());
  if (auto* s = v.as_object().if_contains("client_secret"); s && s->is_string()) a.client_secret = std::string(s->as_string());
  a.registered = true;
}

}  // namespace

asio::awaitable<SmallResponse> small_request(std::string method, std::string url, Headers headers, std::string body,
                                             support::CancelSource* cancel) {
  bridge::http::HttpRequest req{method, url, std::move(headers), std::move(body)};
  bridge::http::StreamOptions opts;
  opts.connect_timeout = std::chrono::seconds(15);
  opts.idle_timeout = std::chrono::seconds(30);
  SmallResponse out;
  auto failure = co_await bridge::http::stream_request(
      req, opts,
      [&](const bridge::http::HttpResponseHead& h) {
        out.status = h.status;
        out.www_authenticate = h.header("www-authenticate");
      },
      [&](std::string_view chunk) {
        if (out.body.size() < (1u << 20)) out.body.append(chunk);
      },
      cancel);
  if (failure && failure->kind == bridge::http::FailureKind::Cancelled)
    throw McpError(McpError::Kind::Cancelled, "the sign-in was cancelled");
  if (failure && out.status == 0) throw OAuthError("cannot reach " + url + ": " + failure->message);
  co_return out;
}

Authorizer::Authorizer(std::string server_id, std::string server_url, TokenStore store, std::optional<ClientConfig> client)
    : server_id_(std::move(server_id)), server_url_(std::move(server_url)), store_(std::move(store)), client_(std::move(client)) {
  auth_ = store_.load(server_id_, server_url_);
}

bool Authorizer::reload() {
  auth_ = store_.load(server_id_, server_url_);
  const bool has = auth_ && !auth_->tokens.access_token.empty();
  if (has) needs_sign_in_ = false;
  return has;
}

AuthState Authorizer::state() const {
  if (needs_sign_in_) return AuthState::NeedsSignIn;
  if (!auth_ || auth_->tokens.access_token.empty()) return AuthState::None;
  if (auth_->tokens.expires_at && auth_->tokens.expires_at <= now_seconds())
    return auth_->tokens.refresh_token.empty() ? AuthState::Expired : AuthState::SignedIn;
  return AuthState::SignedIn;
}

void Authorizer::forget_tokens() {
  if (!auth_) return;
  auth_->tokens = Tokens{};
  try {
    store_.save(server_id_, *auth_);
  } catch (const std::exception& e) {
    spdlog::warn("mcp {}: cannot update {}: {}", server_id_, store_.file().string(), e.what());
  }
}

asio::awaitable<std::optional<std::string>> Authorizer::bearer() {
  auto self = shared_from_this();
  if (!auth_ || auth_->tokens.access_token.empty()) co_return std::nullopt;
  if (auth_->tokens.expires_at && auth_->tokens.expires_at - kRefreshAhead <= now_seconds() &&
      !auth_->tokens.refresh_token.empty())
    co_await refresh();
  if (!auth_ || auth_->tokens.access_token.empty()) co_return std::nullopt;
  co_return auth_->tokens.access_token;
}

asio::awaitable<bool> Authorizer::refresh() {
  auto self = shared_from_this();
  // One refresh at a time: others wait for its outcome.
  const std::string before = auth_ ? auth_->tokens.access_token : std::string();
  bool waited = false;
  while (refreshing_) {
    waited = true;
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(20));
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  if (!auth_ || auth_->tokens.refresh_token.empty() || auth_->token_endpoint.empty()) co_return false;
  if (waited) co_return !auth_->tokens.access_token.empty() && auth_->tokens.access_token != before;
  refreshing_ = true;
  struct Done {
    bool& f;
    ~Done() { f = false; }
  } done{refreshing_};
  const std::string old_access = auth_->tokens.access_token;
  std::vector<std::pair<std::string, std::string>> form;
  form.emplace_back("grant_type", "refresh_token");
  form.emplace_back("refresh_token", auth_->tokens.refresh_token);
  if (!auth_->resource.empty()) form.emplace_back("resource", auth_->resource);
  Headers headers;
  std::string secret = auth_->registered ? auth_->client_secret : (client_ ? client_->client_secret : "");
  add_client_auth(headers, form, auth_->client_id, secret, {});
  try {
    auto tokens = co_await token_request(auth_->token_endpoint, std::move(form), std::move(headers), nullptr);
    if (tokens.refresh_token.empty()) tokens.refresh_token = auth_->tokens.refresh_token;
    auth_->tokens = std::move(tokens);
    store_.save(server_id_, *auth_);
    spdlog::info("mcp {}: access token refreshed", server_id_);
    co_return true;
  } catch (const OAuthError& e) {
    // A refused refresh token (revoked, expired) means signing in again.
    spdlog::warn("mcp {}: refreshing the access token failed: {}", server_id_, e.what());
    if (!e.error_code.empty()) forget_tokens();
    co_return false;
  } catch (const std::exception& e) {
    spdlog::warn("mcp {}: refreshing the access token failed: {}", server_id_, e.what());
    co_return false;
  }
}

asio::awaitable<bool> Authorizer::unauthorized(std::string www_authenticate, std::optional<std::string> sent_token) {
  auto self = shared_from_this();
  last_challenge_ = std::move(www_authenticate);
  // Another request refreshed it meanwhile (or another process signed in).
  if (auth_ && !auth_->tokens.access_token.empty() && sent_token != auth_->tokens.access_token) co_return true;
  if (!sent_token && reload()) co_return true;
  if (auth_ && !auth_->tokens.refresh_token.empty() && co_await refresh()) co_return true;
  if (auth_ && !auth_->tokens.access_token.empty()) forget_tokens();
  needs_sign_in_ = true;
  co_return false;
}

asio::awaitable<void> Authorizer::sign_in(SignInPresenter& presenter, support::CancelSource* cancel,
                                          std::chrono::seconds timeout) {
  auto self = shared_from_this();
  auto ex = co_await asio::this_coro::executor;
  // 1. and 2. Where to sign in.
  const SignInTarget target = co_await discover_sign_in(server_url_, last_challenge_, client_, cancel);
  // 3. The redirect listener, then the client (its redirect URI is the listener's).
  RedirectListener listener(ex, client_ ? client_->callback_port : 0);
  StoredAuth a;
  a.url = server_url_;
  a.redirect_uri = listener.redirect_uri();
  a.token_endpoint = target.meta.token_endpoint;
  a.revocation_endpoint = target.meta.revocation_endpoint;
  a.resource = target.resource;
  if (client_ && !client_->client_id.empty()) {
    a.client_id = client_->client_id;
  } else if (!target.meta.registration_endpoint.empty()) {
    co_await register_client(target, a, cancel);
  } else {
    throw OAuthError("the authorization server offers no dynamic client registration: register a client there and set "
                     "oauth.client_id (and client_secret_env) in mcp_servers/" + server_id_ + ".yaml");
  }
  // 4. Authorization code with PKCE.
  const SignInPrompt prompt = co_await authorize_with_code(presenter, target, listener, a, cancel, timeout);
  auth_ = std::move(a);
  needs_sign_in_ = false;
  spdlog::info("mcp {}: signed in", server_id_);
  presenter.finished(prompt, true, "");
}

asio::awaitable<SignInPrompt> Authorizer::authorize_with_code(SignInPresenter& presenter, const SignInTarget& target,
                                                      RedirectListener& listener, StoredAuth& a,
                                                      support::CancelSource* cancel, std::chrono::seconds timeout) {
  const std::string verifier = pkce_verifier();
  const std::string state = random_token(16);
  AuthorizationRequest request;
  request.authorization_endpoint = target.meta.authorization_endpoint;
  request.client_id = a.client_id;
  request.redirect_uri = a.redirect_uri;
  request.code_challenge = pkce_challenge(verifier);
  request.state = state;
  request.scope = target.scope;
  request.resource = target.resource;
  SignInPrompt prompt;
  prompt.server_id = server_id_;
  prompt.url = authorization_url(request);
  support::CancelSource sign_in;
  support::CancelSource::Registration outer;
  if (cancel) outer = cancel->on_cancel([&sign_in] { sign_in.cancel(); });
  try {
    co_await presenter.show(prompt, sign_in);
    auto code = co_await listener.wait_for_code(state, &sign_in, timeout, server_id_);
    std::vector<std::pair<std::string, std::string>> form;
    form.emplace_back("grant_type", "authorization_code");
    form.emplace_back("code", code);
    form.emplace_back("redirect_uri", a.redirect_uri);
    form.emplace_back("code_verifier", verifier);
    if (!target.resource.empty()) form.emplace_back("resource", target.resource);
    Headers headers;
    add_client_auth(headers, form, a.client_id, a.registered ? a.client_secret : (client_ ? client_->client_secret : ""),
                    target.meta.token_endpoint_auth_methods);
    a.tokens = co_await token_request(target.meta.token_endpoint, std::move(form), std::move(headers), &sign_in);
    store_.save(server_id_, a);
  } catch (const std::exception& e) {
    presenter.finished(prompt, false, e.what());
    throw;
  }
  co_return prompt;
}

asio::awaitable<bool> Authorizer::sign_out() {
  auto self = shared_from_this();
  auth_ = store_.load(server_id_, server_url_);
  const bool had = auth_ && !auth_->tokens.access_token.empty();
  if (had && !auth_->revocation_endpoint.empty()) {
    std::vector<std::pair<std::string, std::string>> tokens;
    tokens.emplace_back(auth_->tokens.refresh_token, "refresh_token");
    tokens.emplace_back(auth_->tokens.access_token, "access_token");
    for (const auto& [token, hint] : tokens) {
      if (token.empty()) continue;
      std::vector<std::pair<std::string, std::string>> form;
      form.emplace_back("token", token);
      form.emplace_back("token_type_hint", hint);
      Headers headers;
      headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
      add_client_auth(headers, form, auth_->client_id, auth_->client_secret, {});
      try {
        co_await small_request("POST", auth_->revocation_endpoint, std::move(headers), form_encode(form));
      } catch (const std::exception& e) {
        spdlog::warn("mcp {}: revoking the token failed: {}", server_id_, e.what());
      }
    }
  }
  store_.erase(server_id_);
  auth_.reset();
  co_return had;
}

}  // namespace bridge::mcp::oauth
