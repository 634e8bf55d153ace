#pragma once
// The saved sessions over ACP: session/list and the list's own methods (unstable ACP:
// session/set_title, session/archive and session/unarchive, session/status). They work on saved
// sessions whether or not they are open on this connection.
#include <string>

#include "acp/binder.hpp"
#include "acp/schema/session.hpp"
#include "runtime/agent/session_manager.hpp"

namespace runtime::server {

class AcpSessionCatalog {
 public:
  explicit AcpSessionCatalog(SessionManager& sessions) : sessions_(sessions) {}
  void bind(acp::Binder& binder);

 private:
  using Empty = acp::EmptyResponse;
  acp::awaitable<acp::schema::ListSessionsResponse> list_sessions(acp::schema::ListSessionsRequest req);
  acp::awaitable<acp::schema::SetSessionTitleResponse> set_title(acp::schema::SetSessionTitleRequest req);
  acp::awaitable<Empty> archive(acp::schema::SessionRef req);
  acp::awaitable<Empty> unarchive(acp::schema::SessionRef req);
  acp::awaitable<void> set_archived(const std::string& id, bool archived);
  acp::awaitable<acp::schema::SessionStatusResponse> session_status(acp::schema::SessionRef req);

  SessionManager& sessions_;
};

}  // namespace runtime::server
