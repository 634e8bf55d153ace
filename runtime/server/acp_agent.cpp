#include "runtime/server/acp_agent.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "acp/methods.hpp"
#include "runtime/config/credentials.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/mcp/mcp_manager.hpp"
#include "runtime/server/config_options.hpp"
#include "runtime/server/content_blocks.hpp"
#include "runtime/server/mcp_servers_param.hpp"
#include "runtime/server/session_updates.hpp"

namespace runtime::server {

namespace json = boost::json;
namespace schema = acp::schema;

namespace {

constexpr int kProtocolVersion = 1;

// Engine errors as the editor protocol's errors. Anything else becomes -32603 in Connection.
template <class F>
auto mapping_errors(F& body) -> decltype(body()) {
  try {
    co_return co_await body();
  } catch (const AgentError& e) {
    switch (e.kind) {
      case AgentError::Kind::NotFound: throw acp::RpcError(acp::error_code::kResourceNotFound, e.what());
      case AgentError::Kind::InvalidRequest: throw acp::RpcError(acp::error_code::kInvalidRequest, e.what());
      case AgentError::Kind::InvalidParams: throw acp::invalid_params(e.what());
      case AgentError::Kind::Internal: throw acp::RpcError(acp::error_code::kInternalError, e.what());
    }
    throw;
  } catch (const providers::ModelError& e) {
    throw acp::RpcError(e.kind() == providers::ModelError::Kind::Auth ? acp::error_code::kAuthRequired
                                                                      : acp::error_code::kInternalError,
                        e.what());
  } catch (const runtime::mcp::RequiredServerUnavailable& e) {
    throw acp::RpcError(acp::error_code::kInternalError, e.what());
  }
}

schema::AgentCapabilities agent_capabilities() {
  schema::AgentCapabilities caps;
  caps.loadSession = true;
  caps.promptCapabilities = {true, false, true};  // image, audio, embeddedContext
  caps.mcpCapabilities = {true, true, true};      // http, sse, acp
  caps.sessionCapabilities = {"list", "resume", "close", "delete", "fork", "additionalDirectories", "title", "archive", "status"};
  caps.systemPromptModes = {"override"};
  caps.auth = {"logout", "status"};
  return caps;
}

constexpr const char* kCheckProvider = "check-provider";
constexpr const char* kTerminalLogin = "openvaala-login";

std::vector<schema::AuthMethod> auth_methods(const acp::ClientCapabilities& caps) {
  std::vector<schema::AuthMethod> auth{
      {kCheckProvider, "Use the configured model provider",
       "Checks the model and API key set in config.yaml or the environment", std::nullopt, {}}};
  // Terminal auth only for clients that can run it (auth.terminal): they re-run this binary with
  // `args` in a terminal; exit 0 = logged in.
  if (caps.auth_terminal)
    auth.push_back({kTerminalLogin, "Log in", "Store a model provider API key", "terminal", {"login"}});
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

// `systemPrompt`: the client's text, appended to the agent's instructions or replacing them.
ClientInstructions client_instructions(const std::optional<schema::SystemPrompt>& sp) {
  if (!sp) return {};
  ClientInstructions out{{}, sp->mode == "override"};
  for (const auto& block : sp->content)
    if (const auto* t = std::get_if<schema::TextContent>(&block.value)) out.text += (out.text.empty() ? "" : "\n") + t->text;
  return out;
}

std::vector<std::filesystem::path> normal_paths(const std::vector<std::string>& dirs) {
  std::vector<std::filesystem::path> out;
  for (const auto& d : dirs) out.push_back(std::filesystem::path(d).lexically_normal());
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
    : conn_(conn), binder_(conn), auth_status_update_(conn, acp::methods::kAuthStatusUpdate), client_(conn),
      host_(client_), tunnel_(conn),
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
  // Only `initialize` until the client has initialized: every other method is "not initialized".
  binder_.method(acp::methods::kInitialize, this, &AcpAgent::initialize);
  sessions_.engines().start_loading();
}

AcpAgent::~AcpAgent() { shutdown(); }

void AcpAgent::bind_methods() {
  using namespace acp::methods;
  binder_.method(kAuthenticate, this, &AcpAgent::authenticate);
  binder_.method(kLogout, this, &AcpAgent::logout);
  binder_.method(kAuthStatus, this, &AcpAgent::auth_status);
  binder_.method(kSessionNew, this, &AcpAgent::new_session);
  binder_.method(kSessionLoad, this, &AcpAgent::load_session);
  binder_.method(kSessionResume, this, &AcpAgent::resume_session);
  binder_.method(kSessionFork, this, &AcpAgent::fork_session);
  binder_.method(kSessionClose, this, &AcpAgent::close_session);
  binder_.method(kSessionDelete, this, &AcpAgent::delete_session);
  binder_.method(kSessionList, this, &AcpAgent::list_sessions);
  binder_.method(kSessionSetTitle, this, &AcpAgent::set_title);
  binder_.method(kSessionArchive, this, &AcpAgent::archive);
  binder_.method(kSessionUnarchive, this, &AcpAgent::unarchive);
  binder_.method(kSessionStatus, this, &AcpAgent::session_status);
  binder_.method(kSessionPrompt, this, &AcpAgent::check_prompt, &AcpAgent::prompt);
  binder_.notification(kSessionCancel, this, &AcpAgent::cancel);
  binder_.method(kSessionSetMode, this, &AcpAgent::set_mode);
  binder_.method(kSessionSetConfigOption, this, &AcpAgent::set_config_option);
  binder_.method(kSessionSetModel, this, &AcpAgent::set_model);
}

acp::awaitable<schema::InitializeResponse> AcpAgent::initialize(schema::InitializeRequest req) {
  client_.set_capabilities(req.clientCapabilities);
  if (!binder_.is_initialized()) bind_methods();
  binder_.initialized();
  // We speak version 1 and answer 1 to any request: the client decides whether it can continue.
  co_return schema::InitializeResponse{kProtocolVersion, agent_capabilities(), auth_methods(client_.capabilities()),
                                       {"openvaala", "OpenVaala", OPENVAALA_VERSION}};
}

acp::awaitable<acp::EmptyResponse> AcpAgent::authenticate(schema::AuthenticateRequest req) {
  if (req.methodId != kCheckProvider)
    throw acp::invalid_params("unknown methodId '" + req.methodId + "' (available: " + kCheckProvider + ")");
  auto why = co_await missing_model();
  if (!why.empty()) throw acp::RpcError(acp::error_code::kAuthRequired, why);
  co_await report_auth_status_if_changed();
  co_return Empty{};
}

// Forgets the keys `openvaala login` stored: the next prompt that needs one gets auth_required.
acp::awaitable<acp::EmptyResponse> AcpAgent::logout(acp::NoParams) {
  try {
    if (config::forget_api_keys(config::config_root())) spdlog::info("logout: the stored API keys are forgotten");
  } catch (const std::exception& e) {
    throw acp::RpcError(acp::error_code::kInternalError, e.what());
  }
  co_await report_auth_status_if_changed();
  co_return Empty{};
}

// Named arguments, no temporaries inside co_await: GCC 12 destroys such temporaries twice.
acp::awaitable<schema::NewSessionResponse> AcpAgent::new_session(schema::NewSessionRequest req) {
  const std::string no_id;
  co_return co_await open_session(req, no_id, OpenRequest::Kind::New);
}

acp::awaitable<schema::LoadSessionResponse> AcpAgent::load_session(schema::LoadSessionRequest req) {
  co_return co_await open_session(req, req.sessionId, OpenRequest::Kind::Load);
}

acp::awaitable<schema::LoadSessionResponse> AcpAgent::resume_session(schema::ResumeSessionRequest req) {
  co_return co_await open_session(req, req.sessionId, OpenRequest::Kind::Resume);
}

acp::awaitable<schema::NewSessionResponse> AcpAgent::fork_session(schema::ForkSessionRequest req) {
  co_return co_await open_session(req, req.sessionId, OpenRequest::Kind::Fork);
}

acp::awaitable<schema::NewSessionResponse> AcpAgent::open_session(const schema::SessionSetup& setup,
                                                                  const std::string& session_id, OpenRequest::Kind kind) {
  schema::require_directories(setup);
  OpenRequest request;
  request.kind = kind;
  request.cwd = setup.cwd;
  request.additional_roots = normal_paths(setup.additionalDirectories);
  request.client_instructions = client_instructions(setup.systemPrompt);
  AcpServerOptions mcp_options;
  mcp_options.cwd = setup.cwd;
  request.editor_servers = mcp_server_specs(setup.mcpServers, mcp_options);
  request.session_id = session_id;
  request.executor = setup.executor();
  if (kind == OpenRequest::Kind::New) co_await require_model();
  auto body = [&]() -> acp::awaitable<std::shared_ptr<Session>> {
    if (kind == OpenRequest::Kind::Fork) co_return co_await sessions_.fork(std::move(request));
    co_return co_await sessions_.open(std::move(request));
  };
  auto session = co_await mapping_errors(body);
  // The model picker fills in when the providers' lists arrive (config_option_update); nothing waits.
  models_.fetch_missing(session->services.engine->main_config());
  schema::NewSessionResponse reply{std::nullopt, mode_state(*session), shown_config_options(*session)};
  if (kind == OpenRequest::Kind::New || kind == OpenRequest::Kind::Fork) reply.sessionId = session->id;
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

acp::awaitable<acp::EmptyResponse> AcpAgent::close_session(schema::SessionRef req) {
  co_await end_session(req.sessionId, false);
  co_return Empty{};
}

acp::awaitable<acp::EmptyResponse> AcpAgent::delete_session(schema::SessionRef req) {
  co_await end_session(req.sessionId, true);
  co_return Empty{};
}

// session/close, and session/delete (`forget`: the saved session goes too).
acp::awaitable<void> AcpAgent::end_session(const std::string& id, bool forget) {
  // An if, not ?: inside co_await: GCC 12 mishandles the temporaries of such an expression.
  auto body = [&]() -> acp::awaitable<void> {
    if (forget) co_await sessions_.remove(id);
    else co_await sessions_.close(id);
  };
  co_await mapping_errors(body);
}

acp::awaitable<schema::ListSessionsResponse> AcpAgent::list_sessions(schema::ListSessionsRequest req) {
  auto archived = req.archived == "include" ? sessions::ArchiveFilter::Include
                  : req.archived == "only"  ? sessions::ArchiveFilter::Only
                                            : sessions::ArchiveFilter::Exclude;
  auto body = [&]() -> acp::awaitable<sessions::ListPage> { co_return co_await sessions_.catalog().list(req.cwd, req.cursor, archived); };
  auto page = co_await mapping_errors(body);
  schema::ListSessionsResponse reply;
  for (const auto& s : page.sessions) {
    schema::SessionInfo info{s.id, s.cwd, std::nullopt, std::nullopt, s.archived};
    if (!s.title.empty()) info.title = s.title;
    if (!s.updated_at.empty()) info.updatedAt = s.updated_at;
    reply.sessions.push_back(std::move(info));
  }
  reply.nextCursor = page.next_cursor;
  co_return reply;
}

acp::awaitable<schema::PromptResponse> AcpAgent::prompt(schema::PromptRequest req, acp::RequestContext ctx) {
  auto session = find_session(req.sessionId);
  UserPrompt user_prompt = user_prompt_from(std::move(req.prompt));
  auto body = [&]() -> acp::awaitable<StopReason> { co_return co_await task_.run(session, std::move(user_prompt), *ctx.cancel); };
  StopReason reason = co_await mapping_errors(body);
  schema::PromptResponse reply{stop_reason_name(reason), std::nullopt};
  // The turn's tokens (unstable PromptResponse.usage), when the provider reported them.
  if (const auto& u = session->conversation.turn_usage) {
    schema::Usage usage{u->input_tokens + u->output_tokens, u->input_tokens, u->output_tokens, std::nullopt};
    if (u->cached_input_tokens) usage.cachedReadTokens = u->cached_input_tokens;
    reply.usage = usage;
  }
  co_return reply;
}

acp::awaitable<acp::EmptyResponse> AcpAgent::set_mode(schema::SetSessionModeRequest req) {
  auto session = find_session(req.sessionId);
  sessions_.set_mode(*session, mode_named(req.modeId, "modeId"));
  send_config_options(*session);
  co_return Empty{};
}

// session/set_model, dropped from the schema in ACP 2.4.0 but still sent by clients built on older
// SDKs (acp-ai-provider, acp.el): the `model` config option under its old name, told to the
// editor as config_option_update since the answer carries no options.
acp::awaitable<acp::EmptyResponse> AcpAgent::set_model(schema::SetSessionModelRequest req) {
  auto session = find_session(req.sessionId);
  const std::string config_id = "model";
  co_await apply_config_option(*session, config_id, req.modelId);
  send_config_options(*session);
  co_return Empty{};
}

acp::awaitable<schema::SetSessionConfigOptionResponse> AcpAgent::set_config_option(schema::SetSessionConfigOptionRequest req) {
  auto session = find_session(req.sessionId);
  co_await apply_config_option(*session, req.configId, req.value);
  co_return schema::SetSessionConfigOptionResponse{shown_config_options(*session)};
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

void AcpAgent::send_config_options(Session& s) { client_.session_update(s.id, config_option_update(shown_config_options(s))); }

std::vector<schema::SessionConfigOption> AcpAgent::shown_config_options(Session& s) {
  auto options = config_option_list(s, models_);
  host_.presentation().show_config_options(s.id, json::serialize(json::value_from(options)));
  return options;
}

void AcpAgent::send_config_options_if_changed(Session& s) {
  auto options = config_option_list(s, models_);
  if (!host_.presentation().show_config_options(s.id, json::serialize(json::value_from(options)))) return;
  client_.session_update(s.id, config_option_update(options));
}

std::shared_ptr<Session> AcpAgent::find_session(const std::string& id) {
  try {
    return sessions_.find(id);
  } catch (const AgentError& e) {
    throw acp::RpcError(acp::error_code::kResourceNotFound, e.what());
  }
}

void AcpAgent::cancel(schema::CancelNotification n) { sessions_.cancel_turn(n.sessionId); }

}  // namespace runtime::server
