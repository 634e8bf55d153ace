#include "runtime/server/acp_agent.hpp"

#include "acp/methods.hpp"
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

}  // namespace

AcpAgent::AcpAgent(acp::Connection& conn, boost::asio::thread_pool& pool, providers::ModelFactory open_model,
                   bool watch_skill_files)
    : conn_(conn), binder_(conn), client_(conn), host_(client_), tunnel_(conn),
      sessions_(SessionManager::Deps{conn.executor(), &pool, &host_, bridge::mcp::TransportDeps{&conn, &tunnel_, {}},
                                     config::config_root(), config::data_dir() / "sessions", open_model,
                                     watch_skill_files}),
      task_(Task::Deps{sessions_, sessions_.engines(), sessions_.mcp(), sessions_.loop(), host_, pool, open_model}),
      auth_(conn, sessions_, client_),
      catalog_(sessions_),
      config_(sessions_, host_, client_, conn.executor()),
      rewind_(sessions_),
      steering_(sessions_, task_) {
  // Only `initialize` until the client has initialized: every other method is "not initialized".
  binder_.method(acp::methods::kInitialize, this, &AcpAgent::initialize);
  sessions_.engines().start_loading();
}

AcpAgent::~AcpAgent() { shutdown(); }

void AcpAgent::bind_methods() {
  using namespace acp::methods;
  binder_.method(kSessionNew, this, &AcpAgent::new_session);
  binder_.method(kSessionLoad, this, &AcpAgent::load_session);
  binder_.method(kSessionResume, this, &AcpAgent::resume_session);
  binder_.method(kSessionFork, this, &AcpAgent::fork_session);
  binder_.method(kSessionClose, this, &AcpAgent::close_session);
  binder_.method(kSessionDelete, this, &AcpAgent::delete_session);
  binder_.method(kSessionPrompt, this, &AcpAgent::check_prompt, &AcpAgent::prompt);
  binder_.notification(kSessionCancel, this, &AcpAgent::cancel);
  auth_.bind(binder_);
  catalog_.bind(binder_);
  config_.bind(binder_);
  rewind_.bind(binder_);
  steering_.bind(binder_);
}

// The extensions a client may use, in the response's top-level `_meta` (where the peers put them).
boost::json::object AcpAgent::initialize_meta() {
  boost::json::object meta = AcpSteering::initialize_meta();
  for (auto& [key, value] : AcpRewind::initialize_meta()) meta[key] = value;
  return meta;
}

acp::awaitable<schema::InitializeResponse> AcpAgent::initialize(schema::InitializeRequest req) {
  client_.set_capabilities(req.clientCapabilities);
  if (!binder_.is_initialized()) bind_methods();
  binder_.initialized();
  // We speak version 1 and answer 1 to any request: the client decides whether it can continue.
  co_return schema::InitializeResponse{kProtocolVersion, agent_capabilities(), auth_.methods(),
                                       {"openvaala", "OpenVaala", OPENVAALA_VERSION}, initialize_meta()};
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
  if (kind == OpenRequest::Kind::New) co_await auth_.require_model();
  auto body = [&]() -> acp::awaitable<std::shared_ptr<Session>> {
    if (kind == OpenRequest::Kind::Fork) co_return co_await sessions_.fork(std::move(request));
    co_return co_await sessions_.open(std::move(request));
  };
  auto session = co_await mapping_errors(body);
  // The model picker fills in when the providers' lists arrive (config_option_update); nothing waits.
  config_.fetch_models(session->services.engine->main_config());
  schema::NewSessionResponse reply{std::nullopt, mode_state(*session), config_.shown_config_options(*session)};
  if (kind == OpenRequest::Kind::New || kind == OpenRequest::Kind::Fork) reply.sessionId = session->id;
  co_return reply;
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

acp::awaitable<schema::PromptResponse> AcpAgent::prompt(schema::PromptRequest req, acp::RequestContext ctx) {
  auto session = find_open_session(sessions_, req.sessionId);
  UserPrompt user_prompt = user_prompt_from(std::move(req.prompt));
  user_prompt.message_id = prompt_message_id(req.messageId, *session);
  const std::string message_id = user_prompt.message_id;
  auto body = [&]() -> acp::awaitable<StopReason> { co_return co_await task_.run(session, std::move(user_prompt), *ctx.cancel); };
  StopReason reason = co_await mapping_errors(body);
  schema::PromptResponse reply{stop_reason_name(reason), std::nullopt, message_id};
  // The turn's tokens (unstable PromptResponse.usage), when the provider reported them.
  if (const auto& u = session->conversation.turn_usage) {
    schema::Usage usage{u->input_tokens + u->output_tokens, u->input_tokens, u->output_tokens, std::nullopt};
    if (u->cached_input_tokens) usage.cachedReadTokens = u->cached_input_tokens;
    reply.usage = usage;
  }
  co_return reply;
}

void AcpAgent::cancel(schema::CancelNotification n) { sessions_.cancel_turn(n.sessionId); }

}  // namespace runtime::server
