#include "runtime/acp_agent.hpp"

#include <spdlog/spdlog.h>

#include <random>

#include "acp/methods.hpp"
#include "acp/params.hpp"
#include "bridge/mcp/acp_servers.hpp"
#include "runtime/agent/spawn_agent_tool.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/hooks/hooks_async.hpp"
#include "bridge/process/run_blocking.hpp"
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include "runtime/mcp/mcp_manager.hpp"

namespace runtime {

namespace json = boost::json;
using acp::Params;

namespace {

constexpr int kProtocolVersion = 1;

std::string new_session_id() {
  static std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string id = "ses_";
  for (int i = 0; i < 24; ++i) id.push_back(hex[rng() & 15]);
  return id;
}

std::vector<std::unique_ptr<tools::Tool>> builtin_tools() {
  std::vector<std::unique_ptr<tools::Tool>> t;
  t.push_back(tools::make_read_file_tool());
  t.push_back(tools::make_apply_patch_tool());
  t.push_back(tools::make_bash_tool());
  return t;
}

json::object modes_state(const Session& s) {
  json::array modes;
  for (const auto& m : all_modes())
    modes.push_back(json::object{{"id", m.id}, {"name", m.name}, {"description", m.description}});
  return json::object{{"currentModeId", mode_id(s.mode)}, {"availableModes", std::move(modes)}};
}

// The prompt's content blocks as one user message.
Message user_message_from(const json::array& prompt) {
  Message m;
  m.role = Message::Role::User;
  auto append = [&](std::string_view text) {
    if (!m.text.empty()) m.text += "\n";
    m.text.append(text);
  };
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    if (!prompt[i].is_object()) throw acp::invalid_params("prompt[" + std::to_string(i) + "] must be an object");
    const auto& block = prompt[i].as_object();
    auto type = acp::str_at(block, "type");
    if (type == "text") {
      append(acp::str_at(block, "text"));
    } else if (type == "image") {
      m.images.push_back({std::string(acp::str_at(block, "mimeType")), std::string(acp::str_at(block, "data"))});
    } else if (type == "resource_link") {
      append("[@" + std::string(acp::str_at(block, "name")) + "](" + std::string(acp::str_at(block, "uri")) + ")");
    } else if (type == "resource") {
      if (auto* res = acp::obj_at(block, "resource")) {
        auto uri = acp::str_at(*res, "uri");
        if (res->contains("text"))
          append("<context ref=\"" + std::string(uri) + "\">\n" + std::string(acp::str_at(*res, "text")) + "\n</context>");
        else
          append("[@" + std::string(uri) + "](" + std::string(uri) + ") (binary content not shown)");
      }
    } else if (type == "audio") {
      append("(an audio clip was attached; this agent cannot hear audio)");
    } else {
      throw acp::invalid_params("prompt[" + std::to_string(i) + "].type '" + std::string(type) + "' is not supported");
    }
  }
  return m;
}

// A server from mcp_servers/*.yaml or a plugin, as the MCP client needs it.
bridge::mcp::ServerSpec spec_from_config(const engine::McpServerConfig& c, const std::filesystem::path& cwd) {
  bridge::mcp::ServerSpec spec;
  spec.id = c.id;
  switch (c.transport) {
    case engine::McpServerConfig::Transport::Stdio: {
      bridge::mcp::StdioSpec t{c.command, c.args, {}, c.cwd ? c.cwd->string() : cwd.string()};
      for (const auto& [k, v] : c.env) t.env.emplace_back(k, v);
      spec.transport = std::move(t);
      break;
    }
    case engine::McpServerConfig::Transport::Http: {
      bridge::mcp::HttpSpec t{c.url, {}};
      for (const auto& [k, v] : c.headers) t.headers.emplace_back(k, v);
      spec.transport = std::move(t);
      break;
    }
    case engine::McpServerConfig::Transport::Sse: {
      bridge::mcp::SseSpec t{c.url, {}};
      for (const auto& [k, v] : c.headers) t.headers.emplace_back(k, v);
      spec.transport = std::move(t);
      break;
    }
  }
  spec.startup_timeout = std::chrono::milliseconds(static_cast<long>(c.startup_timeout_seconds * 1000));
  spec.tool_timeout = std::chrono::milliseconds(static_cast<long>(c.tool_timeout_seconds * 1000));
  spec.tools = c.tools;
  spec.required = c.required;
  spec.origin = c.plugin.empty() ? c.source_file.string() : "plugin " + c.plugin;
  return spec;
}

}  // namespace

AcpAgent::AcpAgent(acp::Connection& conn, boost::asio::thread_pool& pool)
    : conn_(conn), client_(conn), pool_(pool), loop_(client_, pool, builtin_tools()), tunnel_(conn),
      store_(config::data_dir() / "sessions") {
  bind();
  start_loading_engine();
}

namespace {
// Loads the engine on the pool (blocking file I/O), logging every problem.
std::shared_ptr<const engine::Engine> load_engine_logged() {
  config::Diagnostics diags;
  auto engine = engine::Engine::load(config::config_root(), diags);
  for (const auto& d : diags) spdlog::warn("config: {}", d.to_string());
  return engine;
}
}  // namespace

void AcpAgent::start_loading_engine() {
  engine_ready_ = std::make_unique<boost::asio::steady_timer>(conn_.executor(), boost::asio::steady_timer::time_point::max());
  boost::asio::co_spawn(
      conn_.executor(),
      [this]() -> acp::awaitable<void> {
        auto job = [] { return load_engine_logged(); };
        engine_ = co_await bridge::process::run_blocking(pool_, std::move(job));
        engine_ready_->cancel();
      },
      boost::asio::detached);
}

acp::awaitable<std::shared_ptr<const engine::Engine>> AcpAgent::loaded_engine() {
  while (!engine_) co_await engine_ready_->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  co_return engine_;
}

acp::awaitable<std::shared_ptr<const engine::Engine>> AcpAgent::engine_for_session() {
  auto engine = co_await loaded_engine();
  if (!engine->failed()) co_return engine;
  // The files are read again on every attempt, so fixing them is enough: no restart, no reload.
  auto job = [] { return load_engine_logged(); };
  auto fresh = co_await bridge::process::run_blocking(pool_, std::move(job));
  if (!fresh->failed()) {
    engine_ = fresh;
    co_return fresh;
  }
  constexpr std::size_t kShown = 10;
  std::string msg = "OpenVaala's configuration does not load, so no session can start:";
  std::size_t errors = 0;
  for (const auto& d : fresh->diagnostics()) {
    if (d.severity != config::Diagnostic::Severity::Error) continue;
    if (++errors <= kShown) msg += "\n" + d.to_string();
  }
  if (errors > kShown) msg += "\n(and " + std::to_string(errors - kShown) + " more)";
  msg += "\nFix it (`openvaala config check` lists every problem); the next session reads the files again.";
  throw acp::RpcError(acp::error_code::kInternalError, msg);
}

AcpAgent::~AcpAgent() { shutdown(); }

void AcpAgent::reload_config() {
  if (reloading_) {  // a reload is running: do one more after it, with the newest files
    reload_again_ = true;
    return;
  }
  reloading_ = true;
  boost::asio::co_spawn(
      conn_.executor(),
      [this]() -> acp::awaitable<void> {
        do {
          reload_again_ = false;
          auto job = [] { return load_engine_logged(); };
          auto fresh = co_await bridge::process::run_blocking(pool_, std::move(job));
          if (fresh->failed()) {
            spdlog::error("the configuration did not load; keeping the previous one");
            continue;
          }
          co_await loaded_engine();
          engine_ = std::move(fresh);
          spdlog::info("configuration reloaded: {} skills, {} plugins", engine_->user_level_skills().size(),
                       engine_->plugins().size());
          for (auto& [_, s] : sessions_) {
            s->engine = engine_;
            refresh_view(*s);
          }
        } while (reload_again_);
        reloading_ = false;
      },
      boost::asio::detached);
}

void AcpAgent::shutdown() {
  for (auto& [_, s] : sessions_) {
    if (s->turn_cancel) s->turn_cancel->cancel();
    if (s->mcp) s->mcp->kill_now();
  }
}

void AcpAgent::bind() {
  using namespace acp::methods;
  conn_.on_request(kInitialize, [this](json::value p, acp::RequestContext) { return initialize(std::move(p)); });
  conn_.on_request(kAuthenticate, [this](json::value p, acp::RequestContext) { return authenticate(std::move(p)); });
  conn_.on_request(kSessionNew, [this](json::value p, acp::RequestContext) { return open_session(std::move(p), OpenKind::New); });
  conn_.on_request(kSessionLoad, [this](json::value p, acp::RequestContext) { return open_session(std::move(p), OpenKind::Load); });
  conn_.on_request(kSessionResume, [this](json::value p, acp::RequestContext) { return open_session(std::move(p), OpenKind::Resume); });
  conn_.on_request(kSessionList, [this](json::value p, acp::RequestContext) { return list_sessions(std::move(p)); });
  conn_.on_request(kSessionDelete, [this](json::value p, acp::RequestContext) { return delete_session(std::move(p)); });
  conn_.on_request(kSessionPrompt, [this](json::value p, acp::RequestContext ctx) { return prompt(std::move(p), std::move(ctx)); });
  conn_.on_request(kSessionSetMode, [this](json::value p, acp::RequestContext) { return set_mode(std::move(p)); });
  conn_.on_request(kSessionSetConfigOption, [this](json::value p, acp::RequestContext) { return set_config_option(std::move(p)); });
  conn_.on_request(kSessionClose, [this](json::value p, acp::RequestContext) -> acp::awaitable<json::value> {
    auto id = Params(p).required_string("sessionId");
    auto it = sessions_.find(id);
    if (it == sessions_.end()) throw acp::RpcError(acp::error_code::kResourceNotFound, "Unknown session: " + id);
    auto session = std::move(it->second);
    sessions_.erase(it);
    if (session->turn_cancel) session->turn_cancel->cancel();
    if (auto mcp = session->mcp) co_await mcp->close();
    co_return json::object{};
  });
  conn_.on_notification(kSessionCancel, [this](json::value p) { cancel(p); });
}

acp::awaitable<json::value> AcpAgent::initialize(json::value params) {
  Params p(params);
  // We speak version 1 and answer 1 to any request: the client decides whether it can continue.
  if (!p.optional_int("protocolVersion")) throw acp::invalid_params("missing required field 'protocolVersion'");
  if (auto* caps = p.optional_object("clientCapabilities")) client_.set_capabilities(acp::ClientCapabilities::from_json(*caps));
  json::object agent_caps{
      {"loadSession", true},
      {"promptCapabilities", json::object{{"image", true}, {"audio", false}, {"embeddedContext", true}}},
      {"mcpCapabilities", json::object{{"http", true}, {"sse", true}, {"acp", true}}},
      {"sessionCapabilities", json::object{{"list", json::object{}},
                                           {"resume", json::object{}},
                                           {"close", json::object{}},
                                           {"delete", json::object{}}}},
  };
  json::array auth{json::object{{"id", "check-provider"},
                                {"name", "Use the configured model provider"},
                                {"description", "Checks the model and API key set in config.yaml or the environment"}}};
  // Terminal auth only for clients that can run it (auth.terminal): they re-run this binary with
  // `args` in a terminal; exit 0 = logged in.
  if (client_.capabilities().auth_terminal)
    auth.push_back(json::object{{"type", "terminal"},
                                {"id", "openvaala-login"},
                                {"name", "Log in"},
                                {"description", "Store a model provider API key"},
                                {"args", json::array{"login"}}});
  co_return json::object{{"protocolVersion", kProtocolVersion},
                         {"agentCapabilities", std::move(agent_caps)},
                         {"authMethods", std::move(auth)},
                         {"agentInfo", json::object{{"name", "openvaala"}, {"title", "OpenVaala"}, {"version", OPENVAALA_VERSION}}}};
}

acp::awaitable<json::value> AcpAgent::authenticate(json::value params) {
  auto method = Params(params).required_string("methodId");
  if (method != "check-provider") throw acp::invalid_params("unknown methodId '" + method + "' (available: check-provider)");
  auto engine = co_await loaded_engine();
  try {
    providers::resolve_model(engine->main_config());
  } catch (const providers::ModelError& e) {
    throw acp::RpcError(acp::error_code::kAuthRequired, e.what());
  }
  co_return json::object{};
}

json::array AcpAgent::config_options(const Session& s) const {
  json::array modes;
  for (const auto& m : all_modes()) modes.push_back(json::object{{"value", m.id}, {"name", m.name}, {"description", m.description}});
  json::array out{json::object{{"id", "mode"},
                               {"name", "Mode"},
                               {"description", "What the agent may do without asking"},
                               {"category", "mode"},
                               {"type", "select"},
                               {"currentValue", mode_id(s.mode)},
                               {"options", std::move(modes)}}};
  if (s.engine && s.engine->agents().size() > 1) out.push_back(s.engine->agent_config_option(s.agent_name));
  return out;
}

void AcpAgent::send_commands_if_changed(Session& s) {
  auto commands = s.view.available_commands();
  if (!s.view.find_skill("compact"))
    commands.push_back(json::object{{"name", "compact"},
                                    {"description", "Summarise the conversation so far to free the model's context"}});
  auto text = json::serialize(commands);
  if (text == s.commands_sent) return;
  s.commands_sent = std::move(text);
  client_.session_update(s.id, json::object{{"sessionUpdate", "available_commands_update"}, {"availableCommands", std::move(commands)}});
}

void AcpAgent::refresh_view(Session& s) {
  s.view = s.engine->session_view(s.cwd, s.agent_name);
  for (const auto& d : s.view.diagnostics) spdlog::warn("config: {}", d.to_string());
  for (const auto& f : s.view.agents_md) s.agents_md_included.insert(f.path);
  send_commands_if_changed(s);
}

acp::awaitable<json::value> AcpAgent::open_session(json::value params, OpenKind kind) {
  Params p(params);
  std::string cwd = p.required_string("cwd");
  if (!std::filesystem::path(cwd).is_absolute()) throw acp::invalid_params("'cwd' must be an absolute path, got '" + cwd + "'");
  std::error_code ec;
  if (!std::filesystem::is_directory(cwd, ec)) throw acp::invalid_params("'cwd' is not a directory: " + cwd);
  bridge::mcp::AcpServerOptions mcp_options;
  mcp_options.cwd = cwd;
  const json::value* editor_servers_json = p.object().if_contains("mcpServers");
  auto editor_servers = bridge::mcp::parse_acp_mcp_servers(editor_servers_json ? *editor_servers_json : json::value(nullptr), mcp_options);

  std::optional<sessions::LoadedSession> loaded;
  if (kind != OpenKind::New) {
    auto id = p.required_string("sessionId");
    if (sessions_.count(id)) throw acp::RpcError(acp::error_code::kInvalidRequest, "Session " + id + " is already open");
    auto job = [this, id] { return store_.load(id); };
    loaded = co_await bridge::process::run_blocking(pool_, std::move(job));
    if (!loaded) throw acp::RpcError(acp::error_code::kResourceNotFound, "Unknown session: " + id);
  }

  auto engine = co_await engine_for_session();
  auto session = std::make_shared<Session>();
  Session& s = *session;
  s.id = loaded ? loaded->id : new_session_id();
  s.cwd = std::filesystem::path(cwd).lexically_normal();
  s.engine = engine;
  s.agent_name = engine->default_agent();
  if (loaded) {
    if (!loaded->agent.empty() && engine->find_agent(loaded->agent)) s.agent_name = loaded->agent;
    if (auto m = mode_from_id(loaded->mode)) s.mode = *m;
    s.history = std::move(loaded->conversation);
    s.total_usage = loaded->usage_total;
    if (loaded->last_usage) s.context_tokens = loaded->last_usage->input_tokens + loaded->last_usage->output_tokens;
    s.turn_count = loaded->turns;
    s.title_sent = loaded->title;
  }
  s.view = engine->session_view(s.cwd, s.agent_name);
  for (const auto& d : s.view.diagnostics) spdlog::warn("config: {}", d.to_string());
  for (const auto& f : s.view.agents_md) s.agents_md_included.insert(f.path);
  try {
    s.log = std::make_shared<sessions::SessionWriter>(
        loaded ? store_.open(s.id) : store_.create(sessions::Header{s.id, s.cwd.string(), s.agent_name, mode_id(s.mode)}));
  } catch (const std::exception& e) {
    spdlog::error("session {}: not saved, the session log cannot be written: {}", s.id, e.what());
  }

  // The agent's configured servers, then the editor's (an editor server replaces one of its id).
  std::vector<bridge::mcp::ServerSpec> specs;
  for (const auto& c : s.view.mcp_servers) specs.push_back(spec_from_config(c, s.cwd));
  for (auto& e : editor_servers) {
    std::erase_if(specs, [&](const auto& x) { return x.id == e.id; });
    specs.push_back(std::move(e));
  }
  runtime::mcp::McpManager::Deps deps{conn_.executor(), &conn_, &tunnel_, {s.cwd}, nullptr};
  const std::string sid = s.id;
  deps.on_server_event = [this, sid](const std::string& server, const std::string& message) {
    spdlog::warn("MCP server {}: {}", server, message);
    if (auto it = sessions_.find(sid); it != sessions_.end()) loop_.notify_user(*it->second, "MCP server `" + server + "`: " + message);
  };
  s.mcp = std::make_shared<runtime::mcp::McpManager>(std::move(deps), std::move(specs));
  s.mcp->start_all();

  // SessionStart hooks: their context joins the first message.
  std::shared_ptr<const hooks::HookSet> hook_set(s.engine, &s.engine->hooks());
  if (hook_set->has(hooks::HookEvent::SessionStart)) {
    hooks::HookInput input;
    input.session_id = s.id;
    input.cwd = s.cwd;
    input.source = kind == OpenKind::New ? "startup" : "resume";
    auto outcome = co_await hooks::run_hooks_async(pool_, hook_set, hooks::HookEvent::SessionStart, std::move(input));
    for (auto& c : outcome.additional_context) s.pending_context.push_back(std::move(c));
    for (const auto& e : outcome.errors) spdlog::warn("hook error: {}", e.to_string());
  }

  // session/load shows the whole history before it answers.
  if (kind == OpenKind::Load) {
    for (const auto& item : loaded->replay) client_.session_update(s.id, sessions::to_session_update(item));
    if (!loaded->title.empty())
      client_.session_update(s.id, json::object{{"sessionUpdate", "session_info_update"}, {"title", loaded->title}});
  }
  json::object reply{{"modes", modes_state(s)}, {"configOptions", config_options(s)}};
  if (kind == OpenKind::New) reply["sessionId"] = s.id;
  spdlog::info("session {} in {} ({})", s.id, cwd, kind == OpenKind::New ? "new" : kind == OpenKind::Load ? "loaded" : "resumed");
  sessions_.emplace(s.id, std::move(session));
  // After the reply, so the client knows the session when the commands arrive.
  boost::asio::post(conn_.executor(), [this, sid] {
    if (auto it = sessions_.find(sid); it != sessions_.end()) send_commands_if_changed(*it->second);
  });
  co_return reply;
}

std::shared_ptr<Session> AcpAgent::session_for(const json::value& params) {
  auto id = Params(params).required_string("sessionId");
  auto it = sessions_.find(id);
  if (it == sessions_.end()) throw acp::RpcError(acp::error_code::kResourceNotFound, "Unknown session: " + id);
  return it->second;
}

std::string AcpAgent::system_prompt(const Session& session) const {
  std::string s = base_system_prompt(session);
  auto block = session.view.system_prompt_block();
  if (!block.empty()) s += "\n" + block;
  return s;
}

std::string AcpAgent::base_system_prompt(const Session& session) const {
  std::string s =
      "You are OpenVaala, a coding agent working inside the user's editor. You help with software engineering "
      "tasks in the user's project: read files with read_file, change them with apply_patch, and run commands with "
      "bash. Prefer small, verifiable steps; read before you edit; after changing code, run the relevant checks. "
      "Keep answers short and concrete.\n\n"
      "Environment:\n- Working directory: " +
      session.cwd.string() + "\n- Platform: linux\n";
  return s;
}

acp::awaitable<json::value> AcpAgent::prompt(json::value params, acp::RequestContext ctx) {
  auto session_ptr = session_for(params);
  Session& session = *session_ptr;
  Params p(params);
  Message message = user_message_from(p.required_array("prompt"));
  if (session.turn_cancel) throw acp::RpcError(acp::error_code::kInvalidRequest, "A prompt is already running in this session");
  auto cancel = std::make_shared<acp::CancelSource>();
  session.turn_cancel = cancel;
  struct TurnGuard {
    Session& s;
    ~TurnGuard() { s.turn_cancel.reset(); }
  } guard{session};
  auto link = ctx.cancel->on_cancel([cancel] { cancel->cancel(); });
  const std::string turn_id = session.id + "-t" + std::to_string(++session.turn_count);
  auto engine = session.engine;  // one snapshot for the whole turn, even across a reload
  std::shared_ptr<const hooks::HookSet> hook_set(engine, &engine->hooks());

  std::optional<providers::ModelClient> model;
  try {
    model.emplace(providers::resolve_model(engine->main_config(), session.view.agent.model));
  } catch (const providers::ModelError& e) {
    throw acp::RpcError(e.kind() == providers::ModelError::Kind::Auth ? acp::error_code::kAuthRequired
                                                                      : acp::error_code::kInternalError,
                        e.what());
  }
  // AGENTS.md files are read again every turn: edits made meanwhile count.
  session.view.agents_md = engine::load_agents_md_chain(session.cwd);
  for (const auto& f : session.view.agents_md) session.agents_md_included.insert(f.path);
  TurnSettings settings;
  settings.max_turn_requests = engine->main_config().max_turn_requests;
  settings.system_prompt = system_prompt(session);
  settings.turn_id = turn_id;
  settings.hooks = hook_set;

  // `/compact` (unless a skill of that name exists): summarise now.
  if (message.text.find_first_not_of(" \t") != std::string::npos &&
      message.text.substr(message.text.find_first_not_of(" \t")).rfind("/compact", 0) == 0 && !session.view.find_skill("compact")) {
    co_await loop_.compact(session, *model, settings, *cancel);
    co_return json::object{{"stopReason", cancel->cancelled() ? "cancelled" : "end_turn"}};
  }

  // Slash commands: `/skill rest` attaches the skill.
  auto expansion = engine::expand_slash_command(session.view, message.text);
  if (expansion.kind == engine::SlashExpansion::Kind::Refused) {
    loop_.notify_user(session, expansion.error);
    co_return json::object{{"stopReason", "end_turn"}};
  }
  const std::string typed = message.text;
  if (expansion.kind == engine::SlashExpansion::Kind::Expanded) message.text = expansion.text;

  if (hook_set->has(hooks::HookEvent::UserPromptSubmit)) {
    hooks::HookInput input;
    input.session_id = session.id;
    input.turn_id = turn_id;
    input.cwd = session.cwd;
    input.prompt = typed;
    auto outcome = co_await hooks::run_hooks_async(pool_, hook_set, hooks::HookEvent::UserPromptSubmit, std::move(input), cancel.get());
    loop_.report_hook_outcome(session, outcome);
    if (outcome.blocked || outcome.stop_turn) {
      std::string why = outcome.blocked ? outcome.reason : outcome.stop_reason;
      loop_.notify_user(session, "Your prompt was blocked by a hook" +
                                     (outcome.decided_by_label ? " (" + *outcome.decided_by_label + ")" : std::string()) +
                                     (why.empty() ? std::string(".") : ": " + why));
      co_return json::object{{"stopReason", "end_turn"}};
    }
    for (const auto& c : outcome.additional_context) session.pending_context.push_back(c);
  }
  for (const auto& c : session.pending_context) message.text += "\n\n<context>\n" + c + "\n</context>";
  session.pending_context.clear();

  std::vector<std::unique_ptr<tools::Tool>> mcp_tools;
  if (session.mcp) {
    auto mcp = session.mcp;  // keeps the manager alive if the session closes mid-turn
    mcp_tools = co_await mcp->tools_for_turn(cancel.get());
  }
  for (auto& t : mcp_tools) settings.extra_tools.push_back(t.get());
  SpawnAgentContext spawn{&loop_, engine, hook_set, settings.extra_tools, settings.max_turn_requests, base_system_prompt(session)};
  auto spawn_tool = make_spawn_agent_tool(std::move(spawn));
  settings.extra_tools.push_back(spawn_tool.get());
  settings.extra_tools.push_back(plan_tool_.get());  // top-level turns only (not sub-agents)
  settings.prompt_blocks = p.required_array("prompt");
  std::string stop_reason = "error";
  struct TurnEndGuard {
    AcpAgent& agent;
    Session& session;
    std::string& reason;
    ~TurnEndGuard() { agent.end_turn_record(session, reason); }
  } turn_end{*this, session, stop_reason};
  stop_reason = co_await loop_.run_turn(session, std::move(message), *model, settings, *cancel);
  co_return json::object{{"stopReason", stop_reason}};
}

void AcpAgent::end_turn_record(Session& session, const std::string& stop_reason) {
  if (!session.log) return;
  AgentLoop::record(session, sessions::TurnEnd{stop_reason});
  try {
    session.log->turn_boundary();  // fsync: a finished turn survives a crash
  } catch (const std::exception& e) {
    spdlog::error("session {}: cannot sync the session log: {}", session.id, e.what());
  }
  auto title = session.log->title();
  if (!title.empty() && title != session.title_sent) {
    session.title_sent = title;
    client_.session_update(session.id, json::object{{"sessionUpdate", "session_info_update"},
                                                    {"title", title},
                                                    {"updatedAt", session.log->updated_at()}});
  }
}

acp::awaitable<json::value> AcpAgent::list_sessions(json::value params) {
  Params p(params);
  auto cwd = p.optional_string("cwd");
  if (cwd && !std::filesystem::path(*cwd).is_absolute()) throw acp::invalid_params("'cwd' must be an absolute path");
  auto cursor = p.optional_string("cursor");
  auto job = [this, cwd, cursor]() -> std::variant<sessions::ListPage, std::string> {
    try {
      return store_.list(cwd, cursor, 50);
    } catch (const sessions::InvalidCursor& e) {
      return std::string(e.what());
    }
  };
  auto page = co_await bridge::process::run_blocking(pool_, std::move(job));
  if (auto* err = std::get_if<std::string>(&page)) throw acp::invalid_params("'cursor': " + *err);
  auto& list = std::get<sessions::ListPage>(page);
  json::array infos;
  for (const auto& sum : list.sessions) infos.push_back(sum.to_session_info());
  json::object reply{{"sessions", std::move(infos)}};
  if (list.next_cursor) reply["nextCursor"] = *list.next_cursor;
  co_return reply;
}

acp::awaitable<json::value> AcpAgent::delete_session(json::value params) {
  auto id = Params(params).required_string("sessionId");
  if (auto it = sessions_.find(id); it != sessions_.end()) {
    auto s = it->second;
    sessions_.erase(it);
    if (s->turn_cancel) s->turn_cancel->cancel();
    if (auto mcp = s->mcp) co_await mcp->close();
  }
  auto job = [this, id] { return store_.remove(id); };
  co_await bridge::process::run_blocking(pool_, std::move(job));
  co_return json::object{};
}

void AcpAgent::set_session_mode(Session& session, Mode mode) {
  AgentLoop::record(session, sessions::ModeChange{mode_id(mode)});
  session.mode = mode;
  client_.session_update(session.id, json::object{{"sessionUpdate", "current_mode_update"}, {"currentModeId", mode_id(mode)}});
}

acp::awaitable<json::value> AcpAgent::set_mode(json::value params) {
  Session& session = *session_for(params);
  auto mode_id_str = Params(params).required_string("modeId");
  auto mode = mode_from_id(mode_id_str);
  if (!mode) throw acp::invalid_params("unknown modeId '" + mode_id_str + "' (available: default, accept_edits, read_only, full_auto)");
  set_session_mode(session, *mode);
  client_.session_update(session.id, json::object{{"sessionUpdate", "config_option_update"}, {"configOptions", config_options(session)}});
  co_return json::object{};
}

acp::awaitable<json::value> AcpAgent::set_config_option(json::value params) {
  Session& session = *session_for(params);
  Params p(params);
  auto config_id = p.required_string("configId");
  const auto& value = p.required("value");
  if (!value.is_string()) throw acp::invalid_params("'value' must be a string for '" + config_id + "'");
  std::string v(value.as_string());
  if (config_id == "mode") {
    auto mode = mode_from_id(v);
    if (!mode) throw acp::invalid_params("unknown mode '" + v + "' (available: default, accept_edits, read_only, full_auto)");
    set_session_mode(session, *mode);
  } else if (config_id == "agent") {
    if (!session.engine->find_agent(v)) throw acp::invalid_params("unknown agent '" + v + "'");
    session.agent_name = v;
    AgentLoop::record(session, sessions::AgentChange{v});
    refresh_view(session);
  } else {
    throw acp::invalid_params("unknown configId '" + config_id + "' (available: mode, agent)");
  }
  co_return json::object{{"configOptions", config_options(session)}};
}

void AcpAgent::cancel(const json::value& params) {
  auto* id = params.is_object() ? params.as_object().if_contains("sessionId") : nullptr;
  if (!id || !id->is_string()) return;
  auto it = sessions_.find(std::string(id->as_string()));
  if (it != sessions_.end() && it->second->turn_cancel) it->second->turn_cancel->cancel();
}

}  // namespace runtime
