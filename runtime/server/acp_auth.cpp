#include "runtime/server/acp_auth.hpp"

#include <spdlog/spdlog.h>

#include "acp/methods.hpp"
#include "runtime/config/credentials.hpp"
#include "runtime/config/paths.hpp"

namespace runtime::server {

namespace schema = acp::schema;

namespace {

constexpr const char* kCheckProvider = "check-provider";
constexpr const char* kTerminalLogin = "openvaala-login";

// session/new without a usable model: auth_required naming the methods that fix it, so that the
// client offers them (the ACP Registry's clients do) instead of a session whose first prompt fails.
acp::RpcError model_required(const std::string& why, const acp::ClientCapabilities& caps) {
  std::string how = caps.auth_terminal ? std::string("Authenticate with '") + kTerminalLogin +
                                             "' (runs `openvaala login` in a terminal), or set the key and use '" +
                                             kCheckProvider + "'."
                                       : std::string("Run `openvaala login`, or set the key, then authenticate with '") +
                                             kCheckProvider + "'.";
  return acp::RpcError(acp::error_code::kAuthRequired, why + " " + how);
}

// Why no model can answer a session of `engine`'s default agent; empty: one can.
std::string model_problem(const engine::Engine& engine) {
  const engine::Agent* agent = engine.find_agent(engine.default_agent());
  try {
    providers::resolve_model(engine.main_config(), agent ? agent->model : std::nullopt);
  } catch (const providers::ModelError& e) {
    return e.what();
  }
  return {};
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

AcpAuth::AcpAuth(acp::Connection& conn, SessionManager& sessions, acp::ClientApi& client)
    : sessions_(sessions), client_(client), status_update_(conn, acp::methods::kAuthStatusUpdate) {}

void AcpAuth::bind(acp::Binder& binder) {
  using namespace acp::methods;
  binder.method(kAuthenticate, this, &AcpAuth::authenticate);
  binder.method(kLogout, this, &AcpAuth::logout);
  binder.method(kAuthStatus, this, &AcpAuth::auth_status);
}

std::vector<schema::AuthMethod> AcpAuth::methods() const {
  std::vector<schema::AuthMethod> auth{
      {kCheckProvider, "Use the configured model provider",
       "Checks the model and API key set in config.yaml or the environment", std::nullopt, {}}};
  // Terminal auth only for clients that can run it (auth.terminal): they re-run this binary with
  // `args` in a terminal; exit 0 = logged in.
  if (client_.capabilities().auth_terminal)
    auth.push_back({kTerminalLogin, "Log in", "Store a model provider API key", "terminal", {"login"}});
  return auth;
}

acp::awaitable<acp::EmptyResponse> AcpAuth::authenticate(schema::AuthenticateRequest req) {
  if (req.methodId != kCheckProvider)
    throw acp::invalid_params("unknown methodId '" + req.methodId + "' (available: " + kCheckProvider + ")");
  auto why = co_await missing_model();
  if (!why.empty()) throw acp::RpcError(acp::error_code::kAuthRequired, why);
  co_await report_status_if_changed();
  co_return Empty{};
}

// Forgets the keys `openvaala login` stored: the next prompt that needs one gets auth_required.
acp::awaitable<acp::EmptyResponse> AcpAuth::logout(acp::NoParams) {
  try {
    if (config::forget_api_keys(config::config_root())) spdlog::info("logout: the stored API keys are forgotten");
  } catch (const std::exception& e) {
    throw acp::RpcError(acp::error_code::kInternalError, e.what());
  }
  co_await report_status_if_changed();
  co_return Empty{};
}

acp::awaitable<schema::AuthStatus> AcpAuth::auth_status(acp::NoParams) {
  auto engine = co_await sessions_.engines().loaded_engine();
  auto status = auth_status_of(*engine);
  state_reported_ = status.state;
  co_return status;
}

acp::awaitable<void> AcpAuth::report_status_if_changed() {
  auto engine = co_await sessions_.engines().loaded_engine();
  auto status = auth_status_of(*engine);
  if (status.state == state_reported_) co_return;
  state_reported_ = status.state;
  status_update_(status);
}

acp::awaitable<std::string> AcpAuth::missing_model() {
  auto engine = co_await sessions_.engines().loaded_engine();
  if (auto why = model_problem(*engine); why.empty()) co_return why;
  // The terminal login writes config.yaml while this server runs: read it again before refusing.
  engine = co_await sessions_.engines().reload_now();
  co_return model_problem(*engine);
}

acp::awaitable<void> AcpAuth::require_model() {
  auto engine = co_await sessions_.engines().loaded_engine();
  if (engine->failed()) co_return;  // a broken config: opening the session says what is wrong
  auto why = co_await missing_model();
  if (!why.empty()) throw model_required(why, client_.capabilities());
}

}  // namespace runtime::server
