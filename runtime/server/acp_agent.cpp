#include "runtime/server/acp_agent.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "acp/methods.hpp"
#include "acp/params.hpp"
#include "runtime/config/credentials.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/mcp/mcp_manager.hpp"
#include "runtime/server/config_options.hpp"
#include "runtime/server/content_blocks.hpp"
#include "runtime/server/mcp_servers_param.hpp"
#include "runtime/server/rpc_errors.hpp"

namespace runtime::server {

namespace json = boost::json;
using acp::Params;

namespace {

constexpr int kProtocolVersion = 1;

json::object agent_capabilities() {
  return json::object{
      {"loadSession", true},
      {"promptCapabilities", json::object{{"image", true}, {"audio", false}, {"embeddedContext", true}}},
      {"mcpCapabilities", json::object{{"http", true}, {"sse", true}, {"acp", true}}},
      {"sessionCapabilities", json::object{{"list", json::object{}},
                                           {"resume", json::object{}},
                                           {"close", json::object{}},
                                           {"delete", json::object{}},
                                           {"fork", json::object{}},
                                           {"additionalDirectories", json::object{}},
                                           {"title", json::object{}},
                                           {"archive", json::object{}},
                                           {"status", json::object{}},
                                           {"systemPrompt", json::object{{"mode", json::object{{"override", json::object{}}}}}}}},
      {"auth", json::object{{"logout", json::object{}}, {"status", json::object{}}}},
  };
}

constexpr const char* kCheckProvider = "check-provider";
constexpr const char* kTerminalLogin = "openvaala-login";

json::array auth_methods(const acp::ClientCapabilities& caps) {
  json::array auth{json::object{{"id", kCheckProvider},
                                {"name", "Use the configured model provider"},
                                {"description", "Checks the model and API key set in config.yaml or the environment"}}};
  // Terminal auth only for clients that can run it (auth.terminal): they re-run this binary with
  // `args` in a terminal; exit 0 = logged in.
  if (caps.auth_terminal)
    auth.push_back(json::object{{"type", "terminal"},
                                {"id", kTerminalLogin},
                                {"name", "Log in"},
                                {"description", "Store a model provider API key"},
                                {"args", json::array{"login"}}});
  return auth;
}

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

std::filesystem::path session_cwd(const Params& p) {
  std::string cwd = p.required_string("cwd");
  if (!std::filesystem::path(cwd).is_absolute()) throw acp::invalid_params("'cwd' must be an absolute path, got '" + cwd + "'");
  std::error_code ec;
  if (!std::filesystem::is_directory(cwd, ec)) throw acp::invalid_params("'cwd' is not a directory: " + cwd);
  return cwd;
}

// `additionalDirectories`: more roots of the session (DESIGN §11), each an absolute existing
// directory. Absent, null or empty: none.
std::vector<std::filesystem::path> additional_directories(const Params& p) {
  std::vector<std::filesystem::path> out;
  const json::value* v = p.object().if_contains("additionalDirectories");
  if (!v || v->is_null()) return out;
  if (!v->is_array()) throw acp::invalid_params("'additionalDirectories' must be an array of absolute paths");
  for (const auto& item : v->as_array()) {
    if (!item.is_string()) throw acp::invalid_params("'additionalDirectories' must hold strings, got " + json::serialize(item));
    std::filesystem::path dir(std::string(item.as_string()));
    if (!dir.is_absolute())
      throw acp::invalid_params("'additionalDirectories' entry must be an absolute path, got '" + dir.string() + "'");
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      throw acp::invalid_params("'additionalDirectories' entry is not a directory: " + dir.string());
    out.push_back(dir.lexically_normal());
  }
  return out;
}

// `systemPrompt` (unstable): text blocks only, mode "append" or "override"; anything else is
// refused (-32602) rather than half applied, as the schema asks.
ClientInstructions client_instructions(const Params& p) {
  const json::value* v = p.object().if_contains("systemPrompt");
  if (!v || v->is_null()) return {};
  if (!v->is_object()) throw acp::invalid_params("'systemPrompt' must be an object {mode, content}");
  Params sp(*v);
  const std::string mode = sp.required_string("mode");
  if (mode != "append" && mode != "override")
    throw acp::invalid_params("systemPrompt mode '" + mode + "' is not supported (available: append, override)");
  const auto& content = sp.required_array("content");
  if (content.empty()) throw acp::invalid_params("'systemPrompt.content' must not be empty");
  ClientInstructions out{{}, mode == "override"};
  for (const auto& block : content) {
    const auto* o = block.if_object();
    const auto* type = o ? o->if_contains("type") : nullptr;
    const auto* text = o ? o->if_contains("text") : nullptr;
    if (!type || !type->is_string() || type->as_string() != "text" || !text || !text->is_string())
      throw acp::invalid_params("'systemPrompt.content' takes text blocks only, got " + json::serialize(block));
    out.text += (out.text.empty() ? "" : "\n") + std::string(text->as_string());
  }
  return out;
}

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
}  // namespace

AcpAgent::AcpAgent(acp::Connection& conn, boost::asio::thread_pool& pool, providers::ModelFactory open_model,
                   bool watch_skill_files)
    : conn_(conn), client_(conn), host_(client_), tunnel_(conn),
      sessions_(SessionManager::Deps{conn.executor(), &pool, &host_, bridge::mcp::TransportDeps{&conn, &tunnel_, {}},
                                     config::config_root(), config::data_dir() / "sessions", open_model,
                                     watch_skill_files}),
      task_(Task::Deps{sessions_, sessions_.engines(), sessions_.mcp(), sessions_.loop(), host_, pool, open_model}),
      models_(conn.executor()) {
  models_.on_change([this] {
    for (const auto& s : sessions_.open_sessions()) send_config_options_if_changed(*s);
  });
  // The first load and each reload: new providers' lists are fetched, `models:` shown at once.
  sessions_.engines().on_reloaded([this](const engine::Engine& engine) {
    models_.fetch_missing(engine.main_config());
    for (const auto& s : sessions_.open_sessions()) send_config_options_if_changed(*s);
  });
  conn_.on_request(acp::methods::kInitialize,
                   [this](json::value p, acp::RequestContext) { return initialize(std::move(p)); });
  conn_.on_unbound_method([this](std::string_view method) -> std::optional<acp::RpcError> {
    if (initialized_ || (method.rfind("session/", 0) != 0 && method != acp::methods::kAuthenticate &&
                         method != acp::methods::kLogout))
      return std::nullopt;
    return acp::RpcError(acp::error_code::kInvalidRequest,
                         "The agent is not initialized: send `initialize` before " + std::string(method));
  });
  sessions_.engines().start_loading();
}

AcpAgent::~AcpAgent() { shutdown(); }

void AcpAgent::bind_methods() {
  using namespace acp::methods;
  using Kind = OpenRequest::Kind;
  auto bind = [this](const char* method, auto member) {
    conn_.on_request(method, [this, member](json::value p, acp::RequestContext) { return (this->*member)(std::move(p)); });
  };
  bind(kAuthenticate, &AcpAgent::authenticate);
  bind(kLogout, &AcpAgent::logout);
  bind(kSessionList, &AcpAgent::list_sessions);
  bind(kSessionSetTitle, &AcpAgent::set_title);
  bind(kSessionStatus, &AcpAgent::session_status);
  bind(kAuthStatus, &AcpAgent::auth_status);
  conn_.on_request(kSessionArchive, [this](json::value p, acp::RequestContext) { return set_archived(std::move(p), true); });
  conn_.on_request(kSessionUnarchive, [this](json::value p, acp::RequestContext) { return set_archived(std::move(p), false); });
  bind(kSessionSetMode, &AcpAgent::set_mode);
  bind(kSessionSetConfigOption, &AcpAgent::set_config_option);
  bind(kSessionSetModel, &AcpAgent::set_model);
  conn_.on_request(kSessionNew, [this](json::value p, acp::RequestContext) { return open_session(std::move(p), Kind::New); });
  conn_.on_request(kSessionLoad, [this](json::value p, acp::RequestContext) { return open_session(std::move(p), Kind::Load); });
  conn_.on_request(kSessionResume, [this](json::value p, acp::RequestContext) { return open_session(std::move(p), Kind::Resume); });
  conn_.on_request(kSessionFork, [this](json::value p, acp::RequestContext) { return open_session(std::move(p), Kind::Fork); });
  conn_.on_request(kSessionClose, [this](json::value p, acp::RequestContext) { return end_session(std::move(p), false); });
  conn_.on_request(kSessionDelete, [this](json::value p, acp::RequestContext) { return end_session(std::move(p), true); });
  conn_.on_request(kSessionPrompt, [this](json::value p, acp::RequestContext ctx) { return prompt(std::move(p), std::move(ctx)); });
  conn_.on_notification(kSessionCancel, [this](json::value p) { cancel(p); });
  bind(kSessionSteering, &AcpAgent::steer);
}

acp::awaitable<json::value> AcpAgent::initialize(json::value params) {
  Params p(params);
  // We speak version 1 and answer 1 to any request: the client decides whether it can continue.
  if (!p.optional_int("protocolVersion")) throw acp::invalid_params("missing required field 'protocolVersion'");
  if (auto* caps = p.optional_object("clientCapabilities")) client_.set_capabilities(acp::ClientCapabilities::from_json(*caps));
  if (!initialized_) bind_methods();
  initialized_ = true;
  co_return json::object{{"protocolVersion", kProtocolVersion},
                         {"agentCapabilities", agent_capabilities()},
                         {"authMethods", auth_methods(client_.capabilities())},
                         {"agentInfo", json::object{{"name", "openvaala"}, {"title", "OpenVaala"}, {"version", OPENVAALA_VERSION}}},
                         {"_meta", initialize_meta()}};
}

acp::awaitable<json::value> AcpAgent::authenticate(json::value params) {
  auto method = Params(params).required_string("methodId");
  if (method != kCheckProvider)
    throw acp::invalid_params("unknown methodId '" + method + "' (available: " + kCheckProvider + ")");
  auto why = co_await missing_model();
  if (!why.empty()) throw acp::RpcError(acp::error_code::kAuthRequired, why);
  co_await report_auth_status_if_changed();
  co_return json::object{};
}

// Forgets the keys `openvaala login` stored: the next prompt that needs one gets auth_required.
acp::awaitable<json::value> AcpAgent::logout(json::value) {
  try {
    if (config::forget_api_keys(config::config_root())) spdlog::info("logout: the stored API keys are forgotten");
  } catch (const std::exception& e) {
    throw acp::RpcError(acp::error_code::kInternalError, e.what());
  }
  co_await report_auth_status_if_changed();
  co_return json::object{};
}

namespace {
// `_meta.openvaala.executor` of session/new (and load, resume): the session's default executor.
std::string meta_executor(const json::object& params) {
  auto* meta = params.if_contains("_meta");
  if (!meta || !meta->is_object()) return {};
  auto* ov = meta->as_object().if_contains("openvaala");
  if (!ov || !ov->is_object()) return {};
  auto* ex = ov->as_object().if_contains("executor");
  if (!ex) return {};
  if (!ex->is_string()) throw acp::invalid_params("'_meta.openvaala.executor' must be a string (an executor id)");
  return std::string(ex->as_string());
}
}  // namespace

acp::awaitable<json::value> AcpAgent::open_session(json::value params, OpenRequest::Kind kind) {
  Params p(params);
  OpenRequest request;
  request.kind = kind;
  request.cwd = session_cwd(p);
  request.additional_roots = additional_directories(p);
  request.client_instructions = client_instructions(p);
  AcpServerOptions mcp_options;
  mcp_options.cwd = request.cwd.string();
  const json::value* editor_servers = p.object().if_contains("mcpServers");
  request.editor_servers = parse_acp_mcp_servers(editor_servers ? *editor_servers : json::value(nullptr), mcp_options);
  if (kind != OpenRequest::Kind::New) request.session_id = p.required_string("sessionId");
  request.executor = meta_executor(p.object());
  if (kind == OpenRequest::Kind::New) co_await require_model();
  auto body = [&]() -> acp::awaitable<std::shared_ptr<Session>> {
    if (kind == OpenRequest::Kind::Fork) co_return co_await sessions_.fork(std::move(request));
    co_return co_await sessions_.open(std::move(request));
  };
  auto session = co_await mapping_errors(body);
  // The model picker fills in when the providers' lists arrive (config_option_update); nothing waits.
  models_.fetch_missing(session->services.engine->main_config());
  json::object reply{{"modes", modes_state(*session)}, {"configOptions", shown_config_options(*session)}};
  if (kind == OpenRequest::Kind::New || kind == OpenRequest::Kind::Fork) reply["sessionId"] = session->id;
  co_return reply;
}

acp::awaitable<std::string> AcpAgent::missing_model() {
  auto engine = co_await sessions_.engines().loaded_engine();
  if (auto why = model_problem(*engine); why.empty()) co_return why;
  // The terminal login writes config.yaml while this server runs: read it again before refusing.
  engine = co_await sessions_.engines().reload_now();
  co_return model_problem(*engine);
}

acp::awaitable<void> AcpAgent::require_model() {
  auto engine = co_await sessions_.engines().loaded_engine();
  if (engine->failed()) co_return;  // a broken config: opening the session says what is wrong
  auto why = co_await missing_model();
  if (!why.empty()) throw model_required(why, client_.capabilities());
}

// session/close, and session/delete (`forget`: the saved session goes too).
acp::awaitable<json::value> AcpAgent::end_session(json::value params, bool forget) {
  auto id = Params(params).required_string("sessionId");
  // An if, not ?: inside co_await: GCC 12 mishandles the temporaries of such an expression.
  auto body = [&]() -> acp::awaitable<void> {
    if (forget) co_await sessions_.remove(id);
    else co_await sessions_.close(id);
  };
  co_await mapping_errors(body);
  co_return json::object{};
}

acp::awaitable<json::value> AcpAgent::list_sessions(json::value params) {
  Params p(params);
  auto cwd = p.optional_string("cwd");
  if (cwd && !std::filesystem::path(*cwd).is_absolute()) throw acp::invalid_params("'cwd' must be an absolute path");
  auto cursor = p.optional_string("cursor");
  auto archived = sessions::ArchiveFilter::Exclude;
  if (auto filter = p.optional_string("archived")) {
    if (*filter == "include") archived = sessions::ArchiveFilter::Include;
    else if (*filter == "only") archived = sessions::ArchiveFilter::Only;
    else if (*filter != "exclude")
      throw acp::invalid_params("unknown archived filter '" + *filter + "' (available: exclude, include, only)");
  }
  auto body = [&]() -> acp::awaitable<sessions::ListPage> { co_return co_await sessions_.catalog().list(cwd, cursor, archived); };
  auto page = co_await mapping_errors(body);
  json::array infos;
  for (const auto& s : page.sessions) {
    json::object info{{"sessionId", s.id}, {"cwd", s.cwd}, {"archived", s.archived}};
    if (!s.title.empty()) info["title"] = s.title;
    if (!s.updated_at.empty()) info["updatedAt"] = s.updated_at;
    infos.push_back(std::move(info));
  }
  json::object reply{{"sessions", std::move(infos)}};
  if (page.next_cursor) reply["nextCursor"] = *page.next_cursor;
  co_return reply;
}

acp::awaitable<json::value> AcpAgent::prompt(json::value params, acp::RequestContext ctx) {
  Params p(params);
  auto session = find_session(p);
  const auto& blocks = p.required_array("prompt");
  Message message = user_message_from(blocks);
  auto body = [&]() -> acp::awaitable<StopReason> { co_return co_await task_.run(session, std::move(message), blocks, *ctx.cancel); };
  StopReason reason = co_await mapping_errors(body);
  json::object reply{{"stopReason", stop_reason_name(reason)}};
  // The turn's tokens (unstable PromptResponse.usage), when the provider reported them.
  if (const auto& u = session->conversation.turn_usage) {
    json::object usage{{"totalTokens", u->input_tokens + u->output_tokens},
                       {"inputTokens", u->input_tokens},
                       {"outputTokens", u->output_tokens}};
    if (u->cached_input_tokens) usage["cachedReadTokens"] = u->cached_input_tokens;
    reply["usage"] = std::move(usage);
  }
  co_return reply;
}

acp::awaitable<json::value> AcpAgent::set_mode(json::value params) {
  Params p(params);
  auto session = find_session(p);
  sessions_.set_mode(*session, mode_named(p.required_string("modeId"), "modeId"));
  send_config_options(*session);
  co_return json::object{};
}

// session/set_model, dropped from the schema in ACP 2.4.0 but still sent by clients built on older
// SDKs (acp-ai-provider, acp.el): the `model` config option under its old name, told to the
// editor as config_option_update since the answer carries no options.
acp::awaitable<json::value> AcpAgent::set_model(json::value params) {
  Params p(params);
  auto session = find_session(p);
  const std::string config_id = "model", model = p.required_string("modelId");
  co_await apply_config_option(*session, config_id, model);
  send_config_options(*session);
  co_return json::object{};
}

acp::awaitable<json::value> AcpAgent::set_config_option(json::value params) {
  Params p(params);
  auto session = find_session(p);
  auto config_id = p.required_string("configId");
  const auto& value = p.required("value");
  if (!value.is_string()) throw acp::invalid_params("'value' must be a string for '" + config_id + "'");
  const std::string v(value.as_string());
  co_await apply_config_option(*session, config_id, v);
  co_return json::object{{"configOptions", shown_config_options(*session)}};
}

// One config option set to `v`, validated (-32602 naming the valid values).
acp::awaitable<void> AcpAgent::apply_config_option(Session& session, const std::string& config_id, const std::string& v) {
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

void AcpAgent::send_config_options(Session& s) {
  client_.session_update(s.id, json::object{{"sessionUpdate", "config_option_update"}, {"configOptions", shown_config_options(s)}});
}

json::array AcpAgent::shown_config_options(Session& s) {
  auto options = config_options(s, models_);
  host_.presentation().show_config_options(s.id, json::serialize(options));
  return options;
}

void AcpAgent::send_config_options_if_changed(Session& s) {
  auto options = config_options(s, models_);
  if (!host_.presentation().show_config_options(s.id, json::serialize(options))) return;
  client_.session_update(s.id, json::object{{"sessionUpdate", "config_option_update"}, {"configOptions", std::move(options)}});
}

std::shared_ptr<Session> AcpAgent::find_session(const Params& p) {
  try {
    return sessions_.find(p.required_string("sessionId"));
  } catch (const AgentError& e) {
    throw acp::RpcError(acp::error_code::kResourceNotFound, e.what());
  }
}

void AcpAgent::cancel(const json::value& params) {
  auto* id = params.is_object() ? params.as_object().if_contains("sessionId") : nullptr;
  if (id && id->is_string()) sessions_.cancel_turn(std::string(id->as_string()));
}

}  // namespace runtime::server
