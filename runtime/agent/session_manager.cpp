#include "runtime/agent/session_manager.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <random>
#include <utility>

#include "runtime/agent/journal.hpp"
#include "runtime/agent/mcp_placement.hpp"
#include "runtime/mcp/mcp_manager.hpp"
#include "runtime/mcp/server_specs.hpp"
#include "runtime/tools/tool.hpp"
#include "support/random_id.hpp"
#include "support/run_blocking.hpp"

namespace runtime {

namespace {

std::string new_session_id() { return support::random_id("ses_"); }

}  // namespace

std::string executor_list(const engine::Engine& engine) {
  std::string ids = std::string(config::kLocalExecutor) + ", " + config::kOpenvaalaExecutor;
  for (const auto& [id, _] : engine.executors()) ids += ", " + id;
  return ids;
}

SessionManager::SessionManager(Deps deps)
    : deps_(std::move(deps)), loop_(*deps_.host, *deps_.pool, ToolRouter::builtins()), store_(deps_.sessions_dir),
      executors_(std::make_shared<executors::Registry>(executors::Deps{deps_.executor, deps_.pool,
                                                                       std::make_shared<support::LazyThreadPool>(executors::kFileIoThreads)},
                                                       engine::Engine::default_options(deps_.config_root).builtin_skills_dir)) {}

SessionManager::~SessionManager() {
  shutdown();
  executors_->shutdown();
}

void SessionManager::cancel_all_turns() {
  for (auto& [_, cancel] : running_children_) cancel->cancel();
  for (auto& [_, s] : sessions_)
    if (s->turn_cancel) s->turn_cancel->cancel();
}

void SessionManager::shutdown() {
  cancel_all_turns();
  for (auto& [_, s] : sessions_) {
    s->closing->cancel();
    if (s->mcp) s->mcp->kill_now();
  }
}

void SessionManager::close_executors() { executors_->shutdown(); }

void SessionManager::restore(Session& s, sessions::LoadedSession& loaded) {
  if (!loaded.agent.empty() && s.engine->find_agent(loaded.agent)) s.agent_name = loaded.agent;
  if (auto m = mode_from_id(loaded.mode)) s.mode = *m;
  s.model = std::move(loaded.model);
  s.reasoning_effort = std::move(loaded.reasoning_effort);
  if (!loaded.executor.empty() && s.engine->has_executor(loaded.executor)) s.executor = loaded.executor;
  s.history = std::move(loaded.conversation);
  s.total_usage = loaded.usage_total;
  s.cost = std::move(loaded.cost);
  if (loaded.last_usage) s.context_tokens = loaded.last_usage->input_tokens + loaded.last_usage->output_tokens;
  s.turn_count = loaded.turns;
  s.compactions = loaded.compactions;
  s.title_sent = loaded.title;
}

boost::asio::awaitable<std::shared_ptr<Session>> SessionManager::open(OpenRequest request) {
  auto engine = co_await engine_for_session();
  // Checked before a session/load starts sending its history.
  if (!request.executor.empty() && !engine->has_executor(request.executor))
    throw AgentError(AgentError::Kind::InvalidParams, "_meta.openvaala.executor: there is no executor '" + request.executor +
                                                          "' (available: " + executor_list(*engine) + ")");
  // session/load: the history streams to the editor from now on, beside the load.
  auto replaying = request.kind == OpenRequest::Kind::Load ? start_replay(request.session_id) : nullptr;
  // A session/load that fails stops sending the history at its next batch.
  struct StopReplay {
    std::shared_ptr<ReplayRun> run;
    ~StopReplay() {
      if (run) run->stop = true;
    }
  } stop_replay{replaying};
  auto loaded = co_await load_saved(request);
  auto session = std::make_shared<Session>();
  Session& s = *session;
  s.id = loaded ? loaded->id : new_session_id();
  s.cwd = request.cwd.lexically_normal();
  s.additional_roots = std::move(request.additional_roots);
  s.client_instructions = std::move(request.client_instructions);
  s.engine = engine;
  s.agent_name = engine->default_agent();
  s.executors = executors_;
  if (loaded) restore(s, *loaded);
  // A saved session keeps the executor it last had (if it still exists); else the order of DESIGN §10.
  if (!loaded || loaded->executor.empty() || !engine->has_executor(loaded->executor))
    s.executor = request.executor.empty() ? engine->default_executor(*engine->find_agent(engine->agent_or_default(s.agent_name)))
                                          : request.executor;
  co_await read_view(s);
  s.log = co_await open_log(s, loaded);
  if (!loaded && s.executor != config::kLocalExecutor) record(s, sessions::ExecutorChange{s.executor});
  // With the engine's extensions in, its MCP manager is made now, so that a server failing during a
  // replay is told after the answer; the servers start after it (complete_set_up).
  if (s.engine->extensions_loaded() && !s.engine->failed())
    make_mcp(session, std::move(request.editor_servers), co_await connect_mcp_executors(s));
  else
    s.editor_servers = std::move(request.editor_servers);
  s.started = std::make_shared<support::OneShotEvent>(deps_.executor);
  if (replaying) co_await finish_replay(s, *replaying, *loaded);
  static constexpr const char* kHow[] = {"new", "loaded", "resumed", "forked"};
  spdlog::info("session {} in {} ({})", s.id, s.cwd.string(), kHow[static_cast<int>(request.kind)]);
  // Opened with an earlier step of the startup's load while a later one came in: take it now.
  const bool more_complete = (engine_->extensions_loaded() && !s.engine->extensions_loaded()) ||
                             (engine_->skills_loaded() && !s.engine->skills_loaded());
  if (more_complete && !engine_->failed()) {
    s.engine = engine_;
    rebuild_view(s);
  }
  sessions_.emplace(s.id, session);
  // After the reply, so the editor knows the session when the commands arrive, and so that
  // starting MCP servers (a process each), reaching their executors and the rest of the engine's
  // load never delay the reply.
  // session/load or session/resume answered from the summary: what set_up needs to read the conversation.
  std::optional<sessions::LoadedSession> history;
  if (request.kind == OpenRequest::Kind::Load || request.kind == OpenRequest::Kind::Resume) {
    history.emplace();
    history->id = loaded->id;
    history->log_bytes = loaded->log_bytes;
    history->messages = loaded->messages;
  }
  boost::asio::post(deps_.executor, [this, sid = s.id, kind = request.kind, history = std::move(history)]() mutable {
    auto it = sessions_.find(sid);
    if (it == sessions_.end()) return;
    Session& opened = *it->second;
    opened.announced = true;
    for (auto& n : std::exchange(opened.held_notices, {})) deps_.host->emit(sid, std::move(n));
    send_commands_if_changed(opened);
    boost::asio::co_spawn(deps_.executor, set_up(it->second, kind, std::move(history)), boost::asio::detached);
  });
  co_return session;
}

boost::asio::awaitable<std::shared_ptr<Session>> SessionManager::fork(OpenRequest request) {
  const std::string source = request.session_id;
  sessions::Header header{new_session_id(), request.cwd.lexically_normal().string(), {}, {}, {}};
  std::optional<std::uint64_t> limit;
  std::vector<sessions::RecordBody> settings;
  if (auto it = sessions_.find(source); it != sessions_.end()) {
    const Session& s = *it->second;
    if (s.turn_cancel) limit = s.journal_before_turn;  // the turn in flight is not committed yet
    // What the source runs with now (it may have changed during that turn).
    settings = {sessions::ModeChange{mode_id(s.mode)}, sessions::AgentChange{s.agent_name},
                sessions::ModelChange{s.model}, sessions::ThoughtLevelChange{s.reasoning_effort},
                sessions::ExecutorChange{s.executor}};
  }
  auto job = [this, source, header, limit, settings]() -> std::variant<bool, std::string> {
    try {
      return store_.fork(source, header, limit, settings);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  };
  auto copied = co_await support::run_blocking(*deps_.pool, std::move(job));
  if (auto* err = std::get_if<std::string>(&copied))
    throw AgentError(AgentError::Kind::Internal, "The session could not be forked: " + *err);
  if (!std::get<bool>(copied)) throw AgentError(AgentError::Kind::NotFound, "Unknown session: " + source);
  spdlog::info("session {} forked from {}", header.id, source);
  request.session_id = header.id;
  std::exception_ptr failed;
  try {
    co_return co_await open(std::move(request));
  } catch (...) {
    failed = std::current_exception();
  }
  store_.remove(header.id);  // a fork that cannot be opened leaves nothing behind
  std::rethrow_exception(failed);
}

namespace {
Notice mcp_notice(const std::string& server, mcp::ServerState state, const std::string& detail) {
  const std::string name = "MCP server `" + server + "`";
  switch (state) {
    case mcp::ServerState::Failed: return {NoticeSeverity::Error, name + " could not start", detail, {}};
    case mcp::ServerState::Crashed: return {NoticeSeverity::Warning, name + " crashed", detail, {}};
    case mcp::ServerState::Ready: return {NoticeSeverity::Info, name + " restarted", detail, {}};
    case mcp::ServerState::NeedsSignIn:
      return {NoticeSeverity::Warning, name + " needs sign-in",
              "The next prompt that uses it shows a sign-in link; or run `openvaala mcp login " + server + "`.", {}};
    default: return {NoticeSeverity::Info, name + ": " + mcp::state_name(state), detail, {}};
  }
}
}  // namespace

// The agent's configured servers, then the editor's (an editor server replaces one of its id).
// Nothing starts here: start_all runs after the reply (see open).
void SessionManager::make_mcp(const std::shared_ptr<Session>& session, std::vector<bridge::mcp::ServerSpec> editor_servers,
                              const McpExecutorLinks& links) {
  Session& s = *session;
  std::vector<bridge::mcp::ServerSpec> configured;
  s.required_mcp_left_out.clear();
  for (const auto& c : s.view.mcp_servers) {
    // On its executor (DESIGN §10); one that cannot run there is left out, and the user told why;
    // a required one also fails the turns until it can run there.
    const auto where = mcp_executor(c, s.executor);
    auto spec = mcp::spec_from_config(c, s.cwd);
    const auto down = links.unreachable.find(where);
    try {
      if (down != links.unreachable.end()) throw ExecutorError(down->second);
      configured.push_back(place_mcp_server(spec, c, s, links));
    } catch (const ExecutorError& e) {
      spdlog::warn("MCP server {}: not started on executor {}: {}", c.id, where, e.what());
      notify(s, {NoticeSeverity::Error, "MCP server `" + c.id + "` could not start", e.what()});
      if (c.required)
        s.required_mcp_left_out[c.id] = {where, down != links.unreachable.end(),
                                         mcp::required_unreachable_message(spec, e.what())};
    }
  }
  for (auto& e : editor_servers) {
    std::erase_if(configured, [&](const auto& x) { return x.id == e.id; });
    mcp::add_oauth_to_editor_server(e);
  }
  // The editor's extra folders are roots too; they are part of the sharing key (see McpServerPool).
  std::vector<std::filesystem::path> roots{s.cwd};
  roots.insert(roots.end(), s.additional_roots.begin(), s.additional_roots.end());
  mcp::McpManager::Deps deps{deps_.executor, deps_.tunnel, std::move(roots), nullptr, mcp_servers_};
  deps.tunnel.spawn_pool = deps_.pool;
  const auto modes = deps_.host->elicitation_modes();
  deps.elicit_form = modes.form;
  deps.elicit_url = modes.url;
  deps.on_elicitation_complete = [this](const std::string& id) { deps_.host->elicitation_complete(id); };
  // The prompts are slash commands: the editor's list follows the servers' lists.
  deps.on_prompts_changed = [this, weak = std::weak_ptr<Session>(session)] {
    auto s = weak.lock();
    if (s && s->announced && sessions_.count(s->id)) send_commands_if_changed(*s);
  };
  // A server that fails while session/new is still being answered is told once the editor knows the session.
  deps.on_server_event = [this, weak = std::weak_ptr<Session>(session)](const std::string& server, mcp::ServerState state,
                                                                       const std::string& detail) {
    spdlog::warn("MCP server {}: {} {}", server, mcp::state_name(state), detail);
    auto s = weak.lock();
    if (!s) return;
    if (!s->announced)
      s->held_notices.push_back(mcp_notice(server, state, detail));
    else if (sessions_.count(s->id))
      deps_.host->emit(s->id, mcp_notice(server, state, detail));
  };
  s.mcp = std::make_shared<mcp::McpManager>(std::move(deps), std::move(configured), std::move(editor_servers));
}

// SessionStart hooks: their context joins the first message.
boost::asio::awaitable<void> SessionManager::run_session_start_hooks(std::shared_ptr<Session> session, OpenRequest::Kind kind) {
  try {
    co_await session_start_hooks(*session, kind);
  } catch (const std::exception& e) {
    spdlog::warn("session {}: SessionStart hooks: {}", session->id, e.what());
  }
  session->started->set();  // whatever happened, the first turn must not wait forever
}

boost::asio::awaitable<void> SessionManager::session_start_hooks(Session& s, OpenRequest::Kind kind) {
  std::shared_ptr<const hooks::HookSet> hook_set(s.engine, &s.engine->hooks());
  if (!hook_set->has(hooks::HookEvent::SessionStart)) co_return;
  auto input = hook_input(s, {});
  input.source = kind == OpenRequest::Kind::New ? "startup" : "resume";  // a fork resumes a copy
  // After the answer: the editor knows the session, so the hooks' messages and failures are shown
  // to the user as for every other event. On the session's default executor (DESIGN §10).
  auto outcome =
      co_await loop_.hooks().fire(s, hook_set, hooks::HookEvent::SessionStart, std::move(input), s.closing.get());
  for (auto& c : outcome.additional_context) s.pending_context.push_back(std::move(c));
  for (const auto& e : outcome.errors) spdlog::warn("hook error: {}", e.to_string());
}

std::shared_ptr<Session> SessionManager::find(const std::string& id) const {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) throw AgentError(AgentError::Kind::NotFound, "Unknown session: " + id);
  return it->second;
}

std::vector<std::shared_ptr<Session>> SessionManager::open_sessions() const {
  std::vector<std::shared_ptr<Session>> out;
  for (const auto& [_, s] : sessions_) out.push_back(s);
  return out;
}

boost::asio::awaitable<void> SessionManager::close(const std::string& id) {
  auto session = find(id);
  sessions_.erase(id);
  if (session->turn_cancel) session->turn_cancel->cancel();
  session->closing->cancel();
  if (auto mcp = session->mcp) co_await mcp->close();
}

boost::asio::awaitable<void> SessionManager::remove(const std::string& id) {
  if (auto it = sessions_.find(id); it != sessions_.end()) {
    // Before the files go: a turn still ending writes through this writer on this thread, and
    // must not bring the sidecar back once they are gone.
    if (auto log = it->second->log) log->mark_deleted();
    co_await close(id);
  }
  auto job = [this, id] { return store_.remove(id); };
  co_await support::run_blocking(*deps_.pool, std::move(job));
}

boost::asio::awaitable<sessions::ListPage> SessionManager::list(std::optional<std::string> cwd,
                                                                std::optional<std::string> cursor,
                                                                sessions::ArchiveFilter archived) {
  auto job = [this, cwd, cursor, archived]() -> std::variant<sessions::ListPage, std::string> {
    try {
      return store_.list(cwd, cursor, 50, archived);
    } catch (const sessions::InvalidCursor& e) {
      return std::string(e.what());
    }
  };
  auto page = co_await support::run_blocking(*deps_.pool, std::move(job));
  if (auto* err = std::get_if<std::string>(&page)) throw AgentError(AgentError::Kind::InvalidParams, "'cursor': " + *err);
  co_return std::move(std::get<sessions::ListPage>(page));
}

void SessionManager::set_mode(Session& session, Mode mode) {
  record(session, sessions::ModeChange{mode_id(mode)});
  session.mode = mode;
  deps_.host->emit(session.id, ModeChanged{mode_id(mode)});
}

void SessionManager::set_agent(Session& session, const std::string& agent) {
  if (!session.engine->find_agent(agent)) throw AgentError(AgentError::Kind::InvalidParams, "unknown agent '" + agent + "'");
  session.agent_name = agent;
  record(session, sessions::AgentChange{agent});
  refresh_view(session);
}

void SessionManager::set_model(Session& session, const std::string& model) {
  session.model = model;
  record(session, sessions::ModelChange{model});
}

void SessionManager::set_reasoning_effort(Session& session, const std::string& effort) {
  session.reasoning_effort = effort;
  record(session, sessions::ThoughtLevelChange{effort});
}

void SessionManager::cancel_turn(const std::string& id) {
  auto it = sessions_.find(id);
  if (it != sessions_.end() && it->second->turn_cancel) it->second->turn_cancel->cancel();
  if (auto child = running_children_.find(id); child != running_children_.end()) child->second->cancel();
}

void SessionManager::start_child(Session& child, const Session& parent, support::CancelSourcePtr cancel) {
  child.id = new_session_id();
  child.parent_id = parent.id;
  try {
    child.log = std::make_shared<sessions::SessionWriter>(
        store_.create(sessions::Header{child.id, child.cwd.string(), child.agent_name, mode_id(child.mode), parent.id}));
  } catch (const std::exception& e) {
    spdlog::error("session {}: not saved, the session log cannot be written: {}", child.id, e.what());
  }
  running_children_[child.id] = std::move(cancel);
  spdlog::info("session {}: sub-agent {} of session {}", child.id, child.agent_name, parent.id);
}

void SessionManager::end_child(Session& child, const char* stop_reason) {
  running_children_.erase(child.id);
  record_turn_end(child, stop_reason);
}

void SessionManager::rebuild_view(Session& s) {
  s.view = s.engine->session_view(s.cwd, s.agent_name, s.executor_files.get());
  for (const auto& d : s.view.diagnostics) spdlog::warn("config: {}", d.to_string());
  for (const auto& f : s.view.agents_md) s.agents_md_included.insert(f.path);
}

void SessionManager::refresh_view(Session& s) {
  rebuild_view(s);
  send_commands_if_changed(s);
}

void SessionManager::send_commands_if_changed(Session& s) {
  // Not before the session/new answer, nor before the skills are in: a list without them would
  // be followed at once by the real one.
  if (!s.announced || !s.engine->skills_loaded()) return;
  auto commands = s.view.available_commands();
  if (!s.view.find_skill("compact"))
    commands.push_back({"compact", "Summarise the conversation so far to free the model's context", ""});
  if (s.mcp)
    for (auto& c : s.mcp->prompt_commands()) commands.push_back({c.name, c.description, c.input_hint});
  std::string shown;
  for (const auto& c : commands) shown += c.name + '\n' + c.description + '\n' + c.input_hint + '\n';
  if (shown == s.commands_sent) return;
  s.commands_sent = std::move(shown);
  deps_.host->emit(s.id, CommandsChanged{std::move(commands)});
}

}  // namespace runtime
