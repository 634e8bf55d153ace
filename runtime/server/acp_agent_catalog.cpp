// The session list's own methods (unstable ACP: session/set_title, session/archive and
// session/unarchive, session/status) and auth/status. They work on saved sessions whether or not
// they are open on this connection.
#include <spdlog/spdlog.h>

#include "acp/methods.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/server/acp_agent.hpp"

namespace runtime::server {

namespace json = boost::json;
namespace schema = acp::schema;

namespace {
// -32002 carrying the session id in `data`, as session/status asks of an unknown session.
[[noreturn]] void unknown_session(const std::string& id, const std::string& message) {
  throw acp::RpcError(acp::error_code::kResourceNotFound, message, json::object{{"sessionId", id}});
}

// What auth/status reports: whether a session can start without the user signing in first.
schema::AuthStatus auth_status_of(const engine::Engine& engine) {
  try {
    auto model = providers::resolve_model(engine.main_config());
    if (model.api_key_source.empty()) return {"not_required", {}};
    // Display only: the provider and where its key comes from, never the key.
    return {"authenticated", {{model.provider.id + " API key (" + model.api_key_source + ")", true}}};
  } catch (const providers::ModelError&) {
    return {"unauthenticated", {}};  // no model or no key: `openvaala login` (or the terminal method)
  }
}
}  // namespace

acp::awaitable<schema::SetSessionTitleResponse> AcpAgent::set_title(schema::SetSessionTitleRequest req) {
  std::string stored;
  try {
    stored = co_await sessions_.catalog().set_title(req.sessionId, std::move(req.title));
  } catch (const AgentError& e) {
    if (e.kind == AgentError::Kind::NotFound) unknown_session(req.sessionId, e.what());
    if (e.kind == AgentError::Kind::InvalidParams) throw acp::invalid_params(e.what());
    throw acp::RpcError(acp::error_code::kInternalError, e.what());
  }
  co_return schema::SetSessionTitleResponse{stored};
}

acp::awaitable<acp::EmptyResponse> AcpAgent::archive(schema::SessionRef req) {
  co_await set_archived(req.sessionId, true);
  co_return Empty{};
}

acp::awaitable<acp::EmptyResponse> AcpAgent::unarchive(schema::SessionRef req) {
  co_await set_archived(req.sessionId, false);
  co_return Empty{};
}

acp::awaitable<void> AcpAgent::set_archived(const std::string& id, bool archived) {
  try {
    co_await sessions_.catalog().set_archived(id, archived);
  } catch (const AgentError& e) {
    if (e.kind == AgentError::Kind::NotFound) unknown_session(id, e.what());
    throw acp::RpcError(acp::error_code::kInternalError, e.what());
  }
}

acp::awaitable<schema::SessionStatusResponse> AcpAgent::session_status(schema::SessionRef req) {
  const char* status = nullptr;
  try {
    status = co_await sessions_.catalog().status(req.sessionId);
  } catch (const AgentError& e) {
    unknown_session(req.sessionId, e.what());
  }
  co_return schema::SessionStatusResponse{status};
}

acp::awaitable<schema::AuthStatus> AcpAgent::auth_status(acp::NoParams) {
  auto engine = co_await sessions_.engines().loaded_engine();
  auto status = auth_status_of(*engine);
  auth_state_reported_ = status.state;
  co_return status;
}

acp::awaitable<void> AcpAgent::report_auth_status_if_changed() {
  auto engine = co_await sessions_.engines().loaded_engine();
  auto status = auth_status_of(*engine);
  if (status.state == auth_state_reported_) co_return;
  auth_state_reported_ = status.state;
  auth_status_update_(status);
}

}  // namespace runtime::server
