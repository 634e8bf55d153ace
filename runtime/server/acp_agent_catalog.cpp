// The session list's own methods (unstable ACP: session/set_title, session/archive and
// session/unarchive, session/status) and auth/status. They work on saved sessions whether or not
// they are open on this connection.
#include <spdlog/spdlog.h>

#include "acp/methods.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/server/acp_agent.hpp"

namespace runtime::server {

namespace json = boost::json;
using acp::Params;

namespace {
// -32002 carrying the session id in `data`, as session/status asks of an unknown session.
[[noreturn]] void unknown_session(const std::string& id, const std::string& message) {
  throw acp::RpcError(acp::error_code::kResourceNotFound, message, json::object{{"sessionId", id}});
}

// What auth/status reports: whether a session can start without the user signing in first.
json::object auth_status_of(const engine::Engine& engine) {
  try {
    auto model = providers::resolve_model(engine.main_config());
    if (model.api_key_source.empty()) return {{"state", "not_required"}};
    // Display only: the provider and where its key comes from, never the key.
    json::object account{{"label", model.provider.id + " API key (" + model.api_key_source + ")"}, {"active", true}};
    return {{"state", "authenticated"}, {"accounts", json::array{std::move(account)}}};
  } catch (const providers::ModelError&) {
    return {{"state", "unauthenticated"}};  // no model or no key: `openvaala login` (or the terminal method)
  }
}
}  // namespace

acp::awaitable<json::value> AcpAgent::set_title(json::value params) {
  Params p(params);
  auto id = p.required_string("sessionId");
  auto title = p.required_string("title");
  std::string stored;
  try {
    stored = co_await sessions_.catalog().set_title(id, std::move(title));
  } catch (const AgentError& e) {
    if (e.kind == AgentError::Kind::NotFound) unknown_session(id, e.what());
    if (e.kind == AgentError::Kind::InvalidParams) throw acp::invalid_params(e.what());
    throw acp::RpcError(acp::error_code::kInternalError, e.what());
  }
  co_return json::object{{"title", stored}};
}

acp::awaitable<json::value> AcpAgent::set_archived(json::value params, bool archived) {
  auto id = Params(params).required_string("sessionId");
  try {
    co_await sessions_.catalog().set_archived(id, archived);
  } catch (const AgentError& e) {
    if (e.kind == AgentError::Kind::NotFound) unknown_session(id, e.what());
    throw acp::RpcError(acp::error_code::kInternalError, e.what());
  }
  co_return json::object{};
}

acp::awaitable<json::value> AcpAgent::session_status(json::value params) {
  auto id = Params(params).required_string("sessionId");
  const char* status = nullptr;
  try {
    status = co_await sessions_.catalog().status(id);
  } catch (const AgentError& e) {
    unknown_session(id, e.what());
  }
  co_return json::object{{"status", status}};
}

acp::awaitable<json::value> AcpAgent::auth_status(json::value) {
  auto engine = co_await sessions_.engines().loaded_engine();
  auto status = auth_status_of(*engine);
  auth_state_reported_ = std::string(status.at("state").as_string());
  co_return status;
}

acp::awaitable<void> AcpAgent::report_auth_status_if_changed() {
  auto engine = co_await sessions_.engines().loaded_engine();
  auto status = auth_status_of(*engine);
  std::string state(status.at("state").as_string());
  if (state == auth_state_reported_) co_return;
  auth_state_reported_ = std::move(state);
  conn_.notify(acp::methods::kAuthStatusUpdate, std::move(status));
}

}  // namespace runtime::server
