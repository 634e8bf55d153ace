#include "runtime/agent/session_manager.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <utility>

#include "runtime/agent/journal.hpp"
#include "runtime/agent/remote/session_executor.hpp"
#include "runtime/mcp/mcp_manager.hpp"
#include "runtime/tools/tool.hpp"
#include "support/random_id.hpp"

namespace runtime {

namespace {

std::string new_session_id() { return support::random_id("ses_"); }

// (The executor by value: the coroutine outlives the caller's loop.)
boost::asio::awaitable<void> release_executor(std::shared_ptr<Executor> ex) { co_await ex->release(); }

std::shared_ptr<executors::Registry> make_registry(const SessionManager::Deps& deps) {
  return std::make_shared<executors::Registry>(
      executors::Deps{deps.io, deps.pool, std::make_shared<support::LazyThreadPool>(executors::kFileIoThreads)},
      engine::Engine::default_options(deps.config_root).builtin_skills_dir);
}

}  // namespace

std::string executor_list(const engine::Engine& engine) {
  std::string ids = std::string(config::kLocalExecutor) + ", " + config::kOpenvaalaExecutor;
  for (const auto& [id, _] : engine.executors()) ids += ", " + id;
  return ids;
}

SessionManager::SessionManager(Deps deps)
    : deps_(std::move(deps)),
      loop_(*deps_.editor, *deps_.pool, ToolRouter::builtins()),
      executors_(make_registry(deps_)),
      engines_(EngineHost::Deps{deps_.io, deps_.pool, deps_.config_root, executors_, deps_.watch_skill_files}, *this),
      mcp_(SessionMcp::Deps{deps_.io, deps_.pool, deps_.editor, deps_.tunnel,
                            [this](const std::string& id) { return sessions_.count(id) > 0; },
                            [this](Session& s) { show_commands(s); }}),
      history_(SessionHistory::Deps{deps_.io, deps_.pool, deps_.editor, deps_.sessions_dir}),
      catalog_(history_.store(), *deps_.pool, *deps_.editor,
               SessionCatalog::OpenSessions{[this](const std::string& id) {
                                              auto it = sessions_.find(id);
                                              return it == sessions_.end() ? std::shared_ptr<Session>() : it->second;
                                            },
                                            [this](const std::string& id) { return close(id); }}) {}

SessionManager::~SessionManager() {
  shutdown();
  executors_->shutdown();
}

void SessionManager::cancel_all_turns() {
  for (auto& [_, cancel] : running_children_) cancel->cancel();
  for (auto& [_, s] : sessions_)
    if (s->turn.cancel) s->turn.cancel->cancel();
}

void SessionManager::shutdown() {
  cancel_all_turns();
  for (auto& [_, s] : sessions_) {
    s->closing->cancel();
    if (s->services.mcp) s->services.mcp->kill_now();
  }
}

void SessionManager::restore(Session& s, sessions::LoadedSession& loaded) {
  SettingsChange saved{mode_from_id(loaded.mode), {}, std::move(loaded.model), {}, std::move(loaded.reasoning_effort)};
  if (!loaded.agent.empty() && s.services.engine->find_agent(loaded.agent)) saved.agent_name = loaded.agent;
  if (!loaded.executor.empty() && s.services.engine->has_executor(loaded.executor)) saved.executor = loaded.executor;
  s.settings.apply(saved);
  auto& c = s.conversation;
  c.history = std::move(loaded.conversation);
  c.total_usage = loaded.usage_total;
  c.cost = std::move(loaded.cost);
  if (loaded.last_usage) c.context_tokens = loaded.last_usage->input_tokens + loaded.last_usage->output_tokens;
  c.turn_count = loaded.turns;
  c.compactions = loaded.compactions;
  s.remembered_permissions = std::move(loaded.remembered_permissions);
}

boost::asio::awaitable<std::shared_ptr<Session>> SessionManager::open(OpenRequest request) {
  auto engine = co_await engines_.engine_for_session();
  // Checked before a session/load starts sending its history.
  if (!request.executor.empty() && !engine->has_executor(request.executor))
    throw AgentError(AgentError::Kind::InvalidParams, "_meta.openvaala.executor: there is no executor '" + request.executor +
                                                          "' (available: " + executor_list(*engine) + ")");
  const auto kind = request.kind;
  if (kind != OpenRequest::Kind::New && sessions_.count(request.session_id))
    throw AgentError(AgentError::Kind::InvalidRequest, "Session " + request.session_id + " is already open");
  // session/load: the history streams to the editor from now on, beside the load.
  auto replaying = kind == OpenRequest::Kind::Load ? history_.start_replay(request.session_id) : nullptr;
  // A session/load that fails stops sending the history at its next batch.
  struct StopReplay {
    std::shared_ptr<SessionHistory::ReplayRun> run;
    ~StopReplay() {
      if (run) run->stop = true;
    }
  } stop_replay{replaying};
  // session/load and session/resume answer with the summary; the conversation is read after the
  // answer, before the first turn (set_up). A fork's journal is new: read whole.
  std::optional<sessions::LoadedSession> loaded;
  if (kind != OpenRequest::Kind::New)
    loaded = co_await history_.load(request.session_id, kind == OpenRequest::Kind::Load || kind == OpenRequest::Kind::Resume);
  auto session = co_await make_session(request, std::move(engine), loaded);
  Session& s = *session;
  if (replaying) co_await history_.finish_replay(s, *replaying, *loaded);
  static constexpr const char* kHow[] = {"new", "loaded", "resumed", "forked"};
  spdlog::info("session {} in {} ({})", s.id, s.settings.cwd.string(), kHow[static_cast<int>(kind)]);
  // Opened with an earlier step of the startup's load while a later one came in: take it now.
  const auto& now = engines_.engine();
  const bool more_complete = (now->extensions_loaded() && !s.services.engine->extensions_loaded()) ||
                             (now->skills_loaded() && !s.services.engine->skills_loaded());
  if (more_complete && !now->failed()) {
    s.services.engine = now;
    rebuild_view(s);
  }
  sessions_.emplace(s.id, session);
  after_answer(s, kind, loaded);
  co_return session;
}

boost::asio::awaitable<std::shared_ptr<Session>> SessionManager::make_session(OpenRequest& request,
                                                                              std::shared_ptr<const engine::Engine> engine,
                                                                              std::optional<sessions::LoadedSession>& loaded) {
  auto session = std::make_shared<Session>();
  Session& s = *session;
  s.id = loaded ? loaded->id : new_session_id();
  s.services.editor = deps_.editor;
  deps_.editor->session_opening(s.id);  // its notices wait for the answer
  s.settings.cwd = request.cwd.lexically_normal();
  s.settings.additional_roots = std::move(request.additional_roots);
  s.settings.client_instructions = std::move(request.client_instructions);
  s.settings.agent_name = engine->default_agent();
  s.services.engine = std::move(engine);
  s.services.executors = executors_;
  if (loaded) restore(s, *loaded);
  // A saved session keeps the executor it last had (if it still exists); else the order of DESIGN §10.
  const auto& e = *s.services.engine;
  if (!loaded || loaded->executor.empty() || !e.has_executor(loaded->executor))
    s.settings.executor = request.executor.empty() ? e.default_executor(*e.find_agent(e.agent_or_default(s.settings.agent_name)))
                                                   : request.executor;
  co_await read_view(s);
  s.services.journal = co_await history_.open_journal(s, loaded);
  if (!loaded && s.settings.executor != config::kLocalExecutor) record(s, sessions::ExecutorChange{s.settings.executor});
  // With the engine's extensions in, its MCP manager is made now, so that a server failing during a
  // replay is told after the answer; the servers start after it (complete_set_up).
  if (e.extensions_loaded() && !e.failed())
    mcp_.make(session, std::move(request.editor_servers), co_await connect_mcp_executors(s));
  else
    s.editor_servers = std::move(request.editor_servers);
  s.started = std::make_shared<support::OneShotEvent>(deps_.io);
  co_return session;
}

void SessionManager::after_answer(const Session& s, OpenRequest::Kind kind, const std::optional<sessions::LoadedSession>& loaded) {
  // After the reply, so the editor knows the session when the commands arrive, and so that
  // starting MCP servers (a process each), reaching their executors and the rest of the engine's
  // load never delay the reply.
  // session/load or session/resume answered from the summary: what set_up needs to read the conversation.
  std::optional<sessions::LoadedSession> history;
  if (kind == OpenRequest::Kind::Load || kind == OpenRequest::Kind::Resume) {
    history.emplace();
    history->id = loaded->id;
    history->log_bytes = loaded->log_bytes;
    history->messages = loaded->messages;
  }
  boost::asio::post(deps_.io, [this, sid = s.id, kind, history = std::move(history)]() mutable {
    auto it = sessions_.find(sid);
    if (it == sessions_.end()) return;
    deps_.editor->session_announced(sid);
    show_commands(*it->second);
    boost::asio::co_spawn(deps_.io, set_up(it->second, kind, std::move(history)), boost::asio::detached);
  });
}

boost::asio::awaitable<std::shared_ptr<Session>> SessionManager::fork(OpenRequest request) {
  const std::string source = request.session_id;
  sessions::Header header{new_session_id(), request.cwd.lexically_normal().string(), {}, {}, {}};
  std::optional<std::uint64_t> limit;
  std::vector<sessions::RecordBody> settings;
  if (auto it = sessions_.find(source); it != sessions_.end()) {
    const Session& s = *it->second;
    if (s.turn.cancel) limit = s.turn.journal_before;  // the turn in flight is not committed yet
    // What the source runs with now (it may have changed during that turn).
    settings = settings_records(s.settings);
  }
  const std::string id = header.id;
  if (!co_await history_.copy(source, std::move(header), limit, std::move(settings)))
    throw AgentError(AgentError::Kind::NotFound, "Unknown session: " + source);
  spdlog::info("session {} forked from {}", id, source);
  request.session_id = id;
  std::exception_ptr failed;
  try {
    co_return co_await open(std::move(request));
  } catch (...) {
    failed = std::current_exception();
  }
  history_.store().remove(id);  // a fork that cannot be opened leaves nothing behind
  std::rethrow_exception(failed);
}

boost::asio::awaitable<bool> SessionManager::complete_set_up(std::shared_ptr<Session> session, support::CancelSource* cancel) {
  Session& s = *session;
  if (s.set_up) co_return true;
  if (!s.services.engine->extensions_loaded() || s.services.engine->failed()) {
    auto engine = co_await engines_.complete_engine(cancel);
    if (!engine || !sessions_.count(s.id)) co_return false;
    if (engine->failed())
      throw AgentError(AgentError::Kind::Internal, broken_config_message(*engine, "this session cannot run a prompt", "the next prompt"));
    if (s.services.engine != engine) {
      s.services.engine = std::move(engine);
      rebuild_view(s);
      show_commands(s);
    }
  }
  if (!s.services.mcp) co_await mcp_.connect_and_make(session, std::exchange(s.editor_servers, {}));
  if (!s.services.mcp || !sessions_.count(s.id)) co_return false;  // closed meanwhile
  s.set_up = true;
  show_commands(s);
  s.services.mcp->start_all();
  co_return true;
}

boost::asio::awaitable<void> SessionManager::set_up(std::shared_ptr<Session> session, OpenRequest::Kind kind,
                                                    std::optional<sessions::LoadedSession> history) {
  if (history) co_await history_.load_conversation(*session, *history);
  bool ready = false;
  try {
    ready = co_await complete_set_up(session, session->closing.get());
  } catch (const AgentError& e) {  // the configuration does not load: its turns are refused until it does
    spdlog::error("session {}: {}", session->id, e.what());
    notify(*session, {NoticeSeverity::Error, "Fix the configuration before the first prompt", e.what(), {}});
  }
  if (ready)
    co_await run_session_start_hooks(session, kind);  // sets `started`
  else
    session->started->set();  // the first turn must not wait forever
}

boost::asio::awaitable<void> SessionManager::run_session_start_hooks(std::shared_ptr<Session> session, OpenRequest::Kind kind) {
  Session& s = *session;
  try {
    std::shared_ptr<const hooks::HookSet> hook_set(s.services.engine, &s.services.engine->hooks());
    if (hook_set->has(hooks::HookEvent::SessionStart)) {
      auto input = hook_input(s, {});
      input.source = kind == OpenRequest::Kind::New ? "startup" : "resume";  // a fork resumes a copy
      // After the answer: the editor knows the session, so the hooks' messages and failures are
      // shown to the user as for every other event. On the session's default executor (DESIGN §10).
      auto outcome =
          co_await loop_.hooks().fire(s, hook_set, hooks::HookEvent::SessionStart, std::move(input), s.closing.get());
      for (auto& c : outcome.additional_context) s.conversation.pending_context.push_back(std::move(c));
      for (const auto& e : outcome.errors) spdlog::warn("hook error: {}", e.to_string());
    }
  } catch (const std::exception& e) {
    spdlog::warn("session {}: SessionStart hooks: {}", s.id, e.what());
  }
  s.started->set();  // whatever happened, the first turn must not wait forever
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
  deps_.editor->session_closed(id);
  if (session->turn.cancel) session->turn.cancel->cancel();
  session->closing->cancel();
  if (auto mcp = session->services.mcp) co_await mcp->close();
  // The executors it alone used are released (an image-mode container goes), in the background:
  // removing a container takes a moment, and the close is answered now.
  for (auto& ex : executors_ ? executors_->session_ended(id) : std::vector<std::shared_ptr<Executor>>{})
    boost::asio::co_spawn(deps_.io, release_executor(ex), boost::asio::detached);
}

boost::asio::awaitable<void> SessionManager::remove(const std::string& id) {
  if (auto it = sessions_.find(id); it != sessions_.end()) {
    // Before the files go: a turn still ending writes through this writer on this thread, and
    // must not bring the sidecar back once they are gone.
    if (auto journal = it->second->services.journal) journal->mark_deleted();
    co_await close(id);
  }
  co_await history_.remove(id);
}

void SessionManager::set_mode(Session& session, Mode mode) {
  change_settings(session, {.mode = mode});
  deps_.editor->emit(session.id, ModeChanged{mode_id(mode)});
}

void SessionManager::set_agent(Session& session, const std::string& agent) {
  if (!session.services.engine->find_agent(agent)) throw AgentError(AgentError::Kind::InvalidParams, "unknown agent '" + agent + "'");
  change_settings(session, {.agent_name = agent});
  rebuild_view(session);
  show_commands(session);
}

void SessionManager::set_model(Session& session, const std::string& model) { change_settings(session, {.model = model}); }

void SessionManager::set_reasoning_effort(Session& session, const std::string& effort) {
  change_settings(session, {.reasoning_effort = effort});
}

boost::asio::awaitable<void> SessionManager::set_executor(Session& session, const std::string& executor) {
  const auto& engine = *session.services.engine;
  if (!engine.has_executor(executor))
    throw AgentError(AgentError::Kind::InvalidParams,
                     "there is no executor '" + executor + "' (available: " + executor_list(engine) + ")");
  const std::string before = session.settings.executor;
  change_settings(session, {.executor = executor});
  if (before == executor) co_return;
  co_await read_view(session);
  show_commands(session);
  if (auto it = sessions_.find(session.id); it != sessions_.end()) co_await mcp_.follow_executor(it->second, before);
}

void SessionManager::cancel_turn(const std::string& id) {
  auto it = sessions_.find(id);
  if (it != sessions_.end() && it->second->turn.cancel) it->second->turn.cancel->cancel();
  if (auto child = running_children_.find(id); child != running_children_.end()) child->second->cancel();
}

void SessionManager::start_child(Session& child, const Session& parent, support::CancelSourcePtr cancel) {
  child.id = new_session_id();
  child.parent_id = parent.id;
  child.services.journal = history_.create_child_journal(child, parent.id);
  running_children_[child.id] = std::move(cancel);
  spdlog::info("session {}: sub-agent {} of session {}", child.id, child.settings.agent_name, parent.id);
}

void SessionManager::end_child(Session& child, const char* stop_reason) {
  running_children_.erase(child.id);
  record_turn_end(child, stop_reason);
}

void SessionManager::show_commands(Session& s) {
  // Not before the skills are in: a list without them would be followed at once by the real one.
  // (The editor's side holds it until the session/new answer and drops an unchanged one.)
  if (!s.services.engine->skills_loaded()) return;
  auto commands = s.services.view.available_commands();
  if (!s.services.view.find_skill("compact"))
    commands.push_back({"compact", "Summarise the conversation so far to free the model's context", ""});
  if (!s.services.view.find_skill("permissions"))
    commands.push_back({"permissions", "List the answers remembered for this session (\"Always allow\", \"Always reject\")",
                        "clear: forget them"});
  if (s.services.mcp)
    for (auto& c : s.services.mcp->prompt_commands()) commands.push_back({c.name, c.description, c.input_hint});
  deps_.editor->emit(s.id, CommandsChanged{std::move(commands)});
}

void SessionManager::use_engine(const std::shared_ptr<const engine::Engine>& engine) {
  for (auto& [_, s] : sessions_) {
    s->services.engine = engine;
    rebuild_view(*s);
    show_commands(*s);
  }
}

std::function<void()> SessionManager::use_skills(const std::shared_ptr<const engine::Engine>& engine,
                                                 const std::vector<engine::Engine::SkillSwap>& swaps, bool commands_same) {
  std::vector<std::string> to_announce;
  for (auto& [_, s] : sessions_) {
    s->services.engine = engine;
    bool swapped = true;
    for (const auto& swap : swaps) swapped = swapped && s->services.view.swap_skill(swap.before, swap.after);
    if (!swapped) rebuild_view(*s);
    if (!swapped || !commands_same) to_announce.push_back(s->id);
  }
  return [this, to_announce = std::move(to_announce)] {
    for (const auto& id : to_announce)
      if (auto it = sessions_.find(id); it != sessions_.end()) show_commands(*it->second);
  };
}

}  // namespace runtime
