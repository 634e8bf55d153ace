#pragma once
// OAuth sign-in for one http/sse MCP server (the MCP authorization spec): the Authorizer gives
// the transports a bearer token (refreshed before it expires and after a 401), and signs the
// user in when there is none: protected resource metadata (RFC 9728) -> authorization server
// metadata (RFC 8414 / OpenID Connect) -> dynamic client registration (RFC 7591) unless the
// server's YAML names a client -> authorization code with PKCE (S256) and `resource` (RFC 8707),
// the redirect caught by a listener on 127.0.0.1. Tokens live in the TokenStore; none is ever
// logged.
//
// Who shows the user the authorization URL is a SignInPresenter: the CLI prints it, a session
// shows it as a message and a tool call; URL-mode elicitation can be another presenter.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bridge/mcp/oauth.hpp"
#include "bridge/mcp/oauth_store.hpp"
#include "support/cancellation.hpp"

namespace bridge::mcp::oauth {

class RedirectListener;
struct SignInTarget;

// `oauth:` of an MCP server's YAML: a client registered by hand (when the server offers no
// dynamic registration) and the scopes to ask for.
struct ClientConfig {
  std::string client_id;      // empty: register dynamically
  std::string client_secret;  // the value of client_secret_env; empty: a public client
  std::vector<std::string> scopes;
  int callback_port = 0;      // 0: any free port on 127.0.0.1
};

struct SignInPrompt {
  std::string server_id;
  std::string url;  // the authorization URL the user opens
};

// The seam between a sign-in and the user. show() runs once the redirect listener is up; it may
// return at once (a message was shown) or after the user answered (an elicitation). Cancelling
// `sign_in` abandons the sign-in (the user declined). finished() reports the end either way.
class SignInPresenter {
 public:
  virtual ~SignInPresenter() = default;
  virtual boost::asio::awaitable<void> show(const SignInPrompt& prompt, support::CancelSource& sign_in) = 0;
  virtual void finished(const SignInPrompt& prompt, bool ok, const std::string& detail) = 0;
};

enum class AuthState { None, SignedIn, Expired, NeedsSignIn };
const char* auth_state_name(AuthState s);  // "none", "signed-in", "expired", "needs sign-in"

class Authorizer : public std::enable_shared_from_this<Authorizer> {
 public:
  Authorizer(std::string server_id, std::string server_url, TokenStore store, std::optional<ClientConfig> client);

  const std::string& server_id() const { return server_id_; }
  const std::string& server_url() const { return server_url_; }
  const TokenStore& store() const { return store_; }

  // The access token to send (refreshed first when it expires within a minute); nullopt: none.
  boost::asio::awaitable<std::optional<std::string>> bearer();
  // The server answered 401 to a request sent with `sent_token` (nullopt: none). True when a
  // new token is there to retry with; false: needs_sign_in() is now set.
  boost::asio::awaitable<bool> unauthorized(std::string www_authenticate, std::optional<std::string> sent_token);
  bool needs_sign_in() const { return needs_sign_in_; }
  // From the stored entry (and whether the server refused us): for `mcp list`.
  AuthState state() const;
  // Rereads the store (another process may have signed in); true when a token is there now.
  bool reload();

  // Signs the user in; throws OAuthError (or McpError Cancelled/Timeout).
  boost::asio::awaitable<void> sign_in(SignInPresenter& presenter, support::CancelSource* cancel,
                                       std::chrono::seconds timeout);
  // Forgets the tokens, revoking them at the server when it offers that; true when there were any.
  boost::asio::awaitable<bool> sign_out();

 private:
  boost::asio::awaitable<bool> refresh();
  // Step 4 of a sign-in: the authorization code with PKCE, exchanged for tokens that are stored
  // in `a`; the prompt shown. Reports a failure to the presenter.
  boost::asio::awaitable<SignInPrompt> authorize_with_code(SignInPresenter& presenter, const SignInTarget& target,
                                                           RedirectListener& listener, StoredAuth& a,
                                                           support::CancelSource* cancel, std::chrono::seconds timeout);
  void forget_tokens();

  std::string server_id_;
  std::string server_url_;
  TokenStore store_;
  std::optional<ClientConfig> client_;
  std::optional<StoredAuth> auth_;
  std::string last_challenge_;  // the latest WWW-Authenticate
  bool needs_sign_in_ = false;
  bool refreshing_ = false;
};

// Sends a request and reads the whole answer (at most 1 MiB): for metadata, registration and
// tokens. Throws OAuthError when the server cannot be reached.
struct SmallResponse {
  int status = 0;
  std::string body;
  std::string www_authenticate;
};
boost::asio::awaitable<SmallResponse> small_request(std::string method, std::string url,
                                                    std::vector<std::pair<std::string, std::string>> headers,
                                                    std::string body, support::CancelSource* cancel = nullptr);

}  // namespace bridge::mcp::oauth
