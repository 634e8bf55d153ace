#include "runtime/server/acp_session_config.hpp"

#include <algorithm>

#include "acp/methods.hpp"
#include "runtime/server/agent_errors.hpp"
#include "runtime/server/config_options.hpp"
#include "runtime/server/session_updates.hpp"

namespace runtime::server {

namespace json = boost::json;
namespace schema = acp::schema;

namespace {

// `what` names the field in the error: "modeId" (set_mode) or "mode" (set_config_option).
Mode mode_named(const std::string& id, const char* what) {
  auto mode = mode_from_id(id);
  if (!mode) throw acp::invalid_params("unknown " + std::string(what) + " '" + id + "' (available: " + mode_ids_text() + ")");
  return *mode;
}

// -32602 naming the valid values when `value` is not one of them (none: the option is not offered).
void expect_one_of(const std::vector<std::string>& values, const std::string& value, const char* what) {
  if (std::find(values.begin(), values.end(), value) != values.end()) return;
  if (values.empty()) throw acp::invalid_params(std::string(what) + " is not offered for this session's model");
  std::string available;
  for (const auto& v : values) available += (available.empty() ? "" : ", ") + v;
  throw acp::invalid_params("unknown " + std::string(what) + " '" + value + "' (available: " + available + ")");
}

}  // namespace

AcpSessionConfig::AcpSessionConfig(SessionManager& sessions, AcpEditorHost& host, acp::ClientApi& client,
                                   boost::asio::any_io_executor io)
    : sessions_(sessions), host_(host), client_(client), models_(std::move(io)) {
  models_.on_change([this] { send_changed_config_options(); });
  // The first load and each reload: new providers' lists are fetched, `models:` shown at once.
  sessions_.engines().on_reloaded([this](const engine::Engine& engine) {
    models_.fetch_missing(engine.main_config());
    send_changed_config_options();
  });
}

void AcpSessionConfig::bind(acp::Binder& binder) {
  using namespace acp::methods;
  binder.method(kSessionSetMode, this, &AcpSessionConfig::set_mode);
  binder.method(kSessionSetConfigOption, this, &AcpSessionConfig::set_config_option);
  binder.method(kSessionSetModel, this, &AcpSessionConfig::set_model);
}

acp::awaitable<acp::EmptyResponse> AcpSessionConfig::set_mode(schema::SetSessionModeRequest req) {
  auto session = find_open_session(sessions_, req.sessionId);
  sessions_.set_mode(*session, mode_named(req.modeId, "modeId"));
  send_config_options(*session);
  co_return Empty{};
}

// session/set_model, dropped from the schema in ACP 2.4.0 but still sent by clients built on older
// SDKs (acp-ai-provider, acp.el): the `model` config option under its old name, told to the
// editor as config_option_update since the answer carries no options.
acp::awaitable<acp::EmptyResponse> AcpSessionConfig::set_model(schema::SetSessionModelRequest req) {
  auto session = find_open_session(sessions_, req.sessionId);
  const std::string config_id = "model";
  co_await apply(*session, config_id, req.modelId);
  send_config_options(*session);
  co_return Empty{};
}

acp::awaitable<schema::SetSessionConfigOptionResponse> AcpSessionConfig::set_config_option(
    schema::SetSessionConfigOptionRequest req) {
  auto session = find_open_session(sessions_, req.sessionId);
  co_await apply(*session, req.configId, req.value);
  co_return schema::SetSessionConfigOptionResponse{shown_config_options(*session)};
}

// One config option set to `v`, validated (-32602 naming the valid values).
acp::awaitable<void> AcpSessionConfig::apply(Session& session, const std::string& config_id, const std::string& v) {
  if (config_id == "mode") {
    sessions_.set_mode(session, mode_named(v, "mode"));
  } else if (config_id == "agent") {
    auto body = [&]() -> acp::awaitable<void> {
      sessions_.set_agent(session, v);
      co_return;
    };
    co_await mapping_errors(body);
  } else if (config_id == "model") {
    expect_one_of(model_values(session, models_), v, "model");
    sessions_.set_model(session, v);
  } else if (config_id == "executor") {
    auto body = [&]() -> acp::awaitable<void> {
      co_await sessions_.set_executor(session, v);
    };
    co_await mapping_errors(body);
  } else if (config_id == "thought_level") {
    expect_one_of(thought_level_values(session), v, "thought_level");
    sessions_.set_reasoning_effort(session, v == kDefaultThoughtLevel ? "" : v);
  } else {
    throw acp::invalid_params("unknown configId '" + config_id + "' (available: mode, model, thought_level, agent, executor)");
  }
}

void AcpSessionConfig::send_config_options(Session& s) {
  client_.session_update(s.id, config_option_update(shown_config_options(s)));
}

std::vector<schema::SessionConfigOption> AcpSessionConfig::shown_config_options(Session& s) {
  auto options = config_option_list(s, models_);
  host_.presentation().show_config_options(s.id, json::serialize(json::value_from(options)));
  return options;
}

void AcpSessionConfig::send_changed_config_options() {
  for (const auto& s : sessions_.open_sessions()) {
    auto options = config_option_list(*s, models_);
    if (!host_.presentation().show_config_options(s->id, json::serialize(json::value_from(options)))) continue;
    client_.session_update(s->id, config_option_update(options));
  }
}

}  // namespace runtime::server
