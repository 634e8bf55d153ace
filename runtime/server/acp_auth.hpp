#pragma once
// Sign-in over ACP: the auth methods `initialize` offers, `authenticate`, `logout`, `auth/status`
// and the auth/status_update a connection gets when the state changes; and the check that a new
// session has a model that can answer (auth_required naming the methods otherwise).
#include <string>
#include <vector>

#include "acp/binder.hpp"
#include "acp/client_api.hpp"
#include "acp/schema/initialize.hpp"
#include "runtime/agent/session_manager.hpp"

namespace runtime::server {

class AcpAuth {
 public:
  AcpAuth(acp::Connection& conn, SessionManager& sessions, acp::ClientApi& client);
  void bind(acp::Binder& binder);
  // The methods a client of these capabilities can use.
  std::vector<acp::schema::AuthMethod> methods() const;
  // auth_required (-32000) naming the auth methods when no model can answer a new session.
  acp::awaitable<void> require_model();

 private:
  using Empty = acp::EmptyResponse;
  acp::awaitable<Empty> authenticate(acp::schema::AuthenticateRequest req);
  acp::awaitable<Empty> logout(acp::NoParams);
  acp::awaitable<acp::schema::AuthStatus> auth_status(acp::NoParams);
  // auth/status_update when the state differs from the one last reported on this connection.
  acp::awaitable<void> report_status_if_changed();
  // Why no model can answer a new session ("": one can), the configuration read again first
  // when the one in use has none.
  acp::awaitable<std::string> missing_model();

  SessionManager& sessions_;
  acp::ClientApi& client_;
  acp::OutgoingNotification<acp::schema::AuthStatus> status_update_;
  std::string state_reported_;  // the last auth state this connection was told
};

}  // namespace runtime::server
