#pragma once
// The sessions of one editor connection: opening (new, load with replay, resume), closing and
// deleting them, listing the saved ones, their mode and agent, and the engine snapshot they use
// (loaded off the io thread, reloaded on request, refused with path:line problems when broken).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bridge/mcp/server_spec.hpp"
#include "bridge/mcp/transport.hpp"
#include "runtime/agent/agent_error.hpp"
#include "runtime/agent/agent_loop.hpp"
#include "runtime/agent/mcp_placement.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/agent/skill_watcher.hpp"
#include "runtime/mcp/mcp_server.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/sessions/session_store.hpp"
#include "support/one_shot_event.hpp"

namespace runtime {

struct OpenRequest {
  enum class Kind { New, Load, Resume, Fork };
  Kind kind = Kind::New;
  std::string session_id;  // Load / Resume; Fork: the source
  std::filesystem::path cwd;
  std::vector<std::filesystem::path> additional_roots;  // the editor's additionalDirectories
  ClientInstructions client_instructions;              // the editor's systemPrompt
  std::vector<bridge::mcp::ServerSpec> editor_servers;  // replace configured servers of the same id
  std::string executor;  // session/new `_meta.openvaala.executor`; empty: the agent's or the configured default
};

// "local, openvaala, devbox, ..." for messages.
std::string executor_list(const engine::Engine& engine);

class SessionManager {
 public:
  struct Deps {
    boost::asio::any_io_executor executor;
    boost::asio::thread_pool* pool = nullptr;
    EditorHost* host = nullptr;
    bridge::mcp::TransportDeps tunnel;  // MCP servers the editor runs
    std::filesystem::path config_root;
    std::filesystem::path sessions_dir;
    providers::ModelFactory open_model;  // empty: the real provider client
    // Skill places are watched once the whole engine is in (SkillWatcher). Off where an
    // io_context is run until it has no work left (unit tests): a watch is work that never ends.
    bool watch_skill_files = false;
  };
  explicit SessionManager(Deps deps);
  ~SessionManager();

  // Loads the engine on the pool in three steps: the settings (config.yaml, agents, executors:
  // all a session/new answer needs), then without the skills (plugins, MCP servers, hooks: what a
  // session needs after its answer), then whole. Sessions opened in between take the later steps
  // as they come in, and announce their slash commands only with the skills.
  void start_loading_engine();
  // Re-reads the configuration. One that fails to load keeps the old one; open sessions pick
  // up new skills and slash commands.
  void reload_config();
  // Re-reads the configuration now and returns the engine in use after (the new one when it
  // loaded): for a session/new after `openvaala login` wrote config.yaml's model meanwhile.
  boost::asio::awaitable<std::shared_ptr<const engine::Engine>> reload_now();
  // The skill places changed on disk (SkillWatcher): SKILL.md files written in place are read
  // again alone, anything else is a reload_config.
  void skills_changed(SkillWatcher::Change change);
  // Runs on the executor once the engine is first loaded, and after each reload that took
  // effect, once the open sessions use it.
  void on_reloaded(std::function<void(const engine::Engine&)> f) { on_reloaded_ = std::move(f); }
  // The editor is gone: cancel every turn, stop every MCP server now.
  void shutdown();
  // Skill files are no longer watched (on the way out: arming at 20,000 folders takes 0.1 s).
  void stop_watching_skills() {
    if (skill_watcher_) skill_watcher_->stop();
  }
  // Cancels every turn and sub-agent, and nothing else: for the way out of the process, where the
  // MCP servers' process groups are signalled together (bridge::process) instead of one by one.
  void cancel_all_turns();
  // The engine as loaded so far (the settings at least).
  boost::asio::awaitable<std::shared_ptr<const engine::Engine>> loaded_engine();
  // Gives a session opened before the engine's extensions were in (or while they did not load)
  // an engine with them, and starts its MCP servers: after the session/new|load answer, and again
  // at a prompt while it has not succeeded (the files are read again, so fixing them is enough).
  // Throws AgentError with the configuration's problems when it does not load. False when
  // `cancel` fired or the session closed first.
  boost::asio::awaitable<bool> complete_set_up(std::shared_ptr<Session> session, support::CancelSource* cancel);
  // Waits until the skills are loaded too (a turn needs them: the system prompt, slash commands).
  // False when `cancel` fired first.
  boost::asio::awaitable<bool> skills_loaded(support::CancelSource* cancel);

  // session/load shows the whole history (through the host) before it returns.
  boost::asio::awaitable<std::shared_ptr<Session>> open(OpenRequest request);
  // session/fork: a new session whose journal is a copy of the source's (open or only saved; of a
  // source with a turn in flight, what came before that turn), with the source's mode, agent,
  // model and thought level, opened like a resumed one. The source is untouched.
  boost::asio::awaitable<std::shared_ptr<Session>> fork(OpenRequest request);
  boost::asio::awaitable<void> close(const std::string& id);
  boost::asio::awaitable<void> remove(const std::string& id);
  boost::asio::awaitable<sessions::ListPage> list(std::optional<std::string> cwd, std::optional<std::string> cursor,
                                                  sessions::ArchiveFilter archived = sessions::ArchiveFilter::Exclude);
  // Saved sessions, open or not (session_catalog.cpp). Each throws AgentError(NotFound) for a
  // session that is neither open nor saved.
  // session/set_title: stores the title (normalised: one line, at most 200 characters; returned)
  // and shows it in an open session; an automatic title never replaces it.
  boost::asio::awaitable<std::string> set_title(const std::string& id, std::string title);
  // session/archive (closing the session first when it is open) and session/unarchive.
  boost::asio::awaitable<void> set_archived(const std::string& id, bool archived);
  // session/status: "open" (in memory) or "saved". No side effects.
  boost::asio::awaitable<const char*> status(const std::string& id);
  // Throws AgentError(NotFound).
  std::shared_ptr<Session> find(const std::string& id) const;
  std::vector<std::shared_ptr<Session>> open_sessions() const;

  void set_mode(Session& session, Mode mode);
  void set_agent(Session& session, const std::string& agent);  // throws AgentError(InvalidParams)
  // From the next model request on; the caller checks that `model` is one offered.
  void set_model(Session& session, const std::string& model);
  void set_reasoning_effort(Session& session, const std::string& effort);  // empty: the model's default
  void cancel_turn(const std::string& id);  // also a sub-agent's session (see start_child)

  // Gives a sub-agent's conversation (spawn_agent, for editors that show sub-agents) a session of
  // its own: a new id and a journal naming its parent (not listed, loadable on its own).
  // session/cancel with its id fires `cancel` until end_child.
  void start_child(Session& child, const Session& parent, support::CancelSourcePtr cancel);
  // Journals the end of its turn and forgets it.
  void end_child(Session& child, const char* stop_reason);
  // Then reads the skills and AGENTS.md on it (session_executor.cpp). Throws AgentError(InvalidParams).
  boost::asio::awaitable<void> set_executor(Session& session, const std::string& executor);
  // Before a turn: a required MCP server left out because its executor did not answer is placed
  // once that executor answers; throws mcp::RequiredServerUnavailable while one is still out.
  boost::asio::awaitable<void> place_required_mcp_servers(std::shared_ptr<Session> session);
  // The session's view: skills and AGENTS.md read on its default executor (DESIGN §10); when that
  // cannot be reached, a notice says so and the view has the local-side skills only.
  boost::asio::awaitable<void> read_view(Session& session);
  // Every turn: the AGENTS.md chain again, on the default executor.
  boost::asio::awaitable<void> reread_agents_md(Session& session, support::CancelSource* cancel);
  // A notice for the session: held until the editor knows the session.
  void notify(Session& session, Notice notice);
  // The server ends: close every executor's connection (ssh -O exit).
  void close_executors();
  const std::shared_ptr<executors::Registry>& executors() const { return executors_; }
  // Shows the session's slash commands when they changed since last shown.
  void send_commands_if_changed(Session& session);

  AgentLoop& loop() { return loop_; }
  EditorHost& host() { return *deps_.host; }
  boost::asio::thread_pool& pool() { return *deps_.pool; }
  std::unique_ptr<providers::Model> open_model(providers::ResolvedModel model) const {
    return deps_.open_model ? deps_.open_model(std::move(model)) : providers::make_model_client(std::move(model));
  }

 private:
  // The engine a session opens with: the settings must load (else AgentError with their problems).
  boost::asio::awaitable<std::shared_ptr<const engine::Engine>> engine_for_session();
  // The startup's engine with its extensions, once in; when it failed, the files are read again
  // (and the sessions take the result if it loads). Null when `cancel` fired first.
  boost::asio::awaitable<std::shared_ptr<const engine::Engine>> complete_engine(support::CancelSource* cancel);
  // After the answer: complete_set_up, then the SessionStart hooks; `started` is set at the end.
  // A configuration that does not load is shown as an error notice.
  // `history`: session/load or session/resume answered from the summary of the log (`history`
  // says how much of it it read); the conversation is read first, before the first turn can start.
  boost::asio::awaitable<void> set_up(std::shared_ptr<Session> session, OpenRequest::Kind kind,
                                      std::optional<sessions::LoadedSession> history = std::nullopt);
  boost::asio::awaitable<void> load_history(Session& s, const sessions::LoadedSession& summary);
  // Reaches the executors of the session's configured MCP servers and makes its MCP manager with
  // them and the editor's servers (none started). False when the session closed meanwhile or got
  // a manager by another path.
  boost::asio::awaitable<bool> make_session_mcp(std::shared_ptr<Session> session,
                                                std::vector<bridge::mcp::ServerSpec> editor_servers);
  boost::asio::awaitable<std::optional<sessions::LoadedSession>> load_saved(const OpenRequest& request);
  // `links`: executors that could not be connected (and why), ports forwarded to http/sse servers.
  void make_mcp(const std::shared_ptr<Session>& session, std::vector<bridge::mcp::ServerSpec> editor_servers,
                const McpExecutorLinks& links);
  boost::asio::awaitable<void> session_start_hooks(Session& s, OpenRequest::Kind kind);
  // session_start_hooks after the answer, then `started` is set.
  boost::asio::awaitable<void> run_session_start_hooks(std::shared_ptr<Session> session, OpenRequest::Kind kind);
  boost::asio::awaitable<void> move_mcp_servers(Session& session, const std::string& before);
  boost::asio::awaitable<void> restart_mcp_servers(std::shared_ptr<Session> session);
  void refresh_view(Session& session);
  void rebuild_view(Session& session);  // refresh_view without announcing the commands
  // The open sessions (and the executors) switch to `engine`; their views and commands follow.
  void use_engine(std::shared_ptr<const engine::Engine> engine);
  // The same for an engine that differs only by the skills in `swaps`: each view swaps them
  // (or is built again when a name changed), the settings stay as they are.
  // Returns when the sessions had it, before their slash commands were sent.
  std::chrono::steady_clock::time_point use_skills(std::shared_ptr<const engine::Engine> engine,
                                                   const std::vector<engine::Engine::SkillSwap>& swaps);
  // Runs the pending reloads one after another (whole ones first; they read every file).
  void run_reloads();
  boost::asio::awaitable<void> reload_whole();
  // False when the skills could not be read again in place (a whole reload is pending then).
  boost::asio::awaitable<bool> reload_skills(std::vector<std::filesystem::path> dirs);
  // Watches the skill places of engine_ when they are not the ones watched already.
  void watch_skills();
  // The startup's last step: the sessions opened with an earlier one take the whole engine.
  void adopt_whole_engine(std::shared_ptr<const engine::Engine> core, std::shared_ptr<const engine::Engine> whole);
  static void restore(Session& s, sessions::LoadedSession& loaded);
  // session/load's history, sent while the session loads: read from its log a batch at a time on
  // the pool (the load runs on the logs' thread beside it), each batch once the editor has read
  // most of the previous one, so memory stays bounded however long the session. A run that is
  // dropped before it ends (the load failed) stops at its next batch.
  struct ReplayRun {
    explicit ReplayRun(boost::asio::any_io_executor ex) : done(std::move(ex)) {}
    support::OneShotEvent done;
    std::exception_ptr error;
    bool stop = false;  // set when the session/load it belongs to ends (failed, or answered)
  };
  std::shared_ptr<ReplayRun> start_replay(const std::string& id);
  boost::asio::awaitable<void> stream_replay(std::string id, std::shared_ptr<sessions::Replay> source,
                                             std::shared_ptr<ReplayRun> run);
  // Waits for the history to be sent, then sends the title: what session/load sends before its answer.
  boost::asio::awaitable<void> finish_replay(const Session& s, ReplayRun& run, const sessions::LoadedSession& loaded);
  // The session's log, created (new) or opened for appending (load, resume, fork), on the pool:
  // creating fsyncs the log, its sidecar and the folder, which must not stall the io thread that
  // serves every session. Null (logged, and why in s.log_unwritable) when it cannot be written.
  boost::asio::awaitable<std::shared_ptr<sessions::SessionWriter>> open_log(Session& s,
                                                                           const std::optional<sessions::LoadedSession>& loaded);

  Deps deps_;
  AgentLoop loop_;
  sessions::SessionStore store_;
  std::shared_ptr<const engine::Engine> engine_;
  std::unique_ptr<support::OneShotEvent> settings_ready_;  // the first step of the startup load is in
  std::unique_ptr<support::OneShotEvent> engine_ready_;    // the second (with the extensions) too
  std::unique_ptr<support::OneShotEvent> skills_ready_;  // the second (the whole engine) too
  bool reloading_ = false;
  bool whole_reload_pending_ = false;
  std::set<std::filesystem::path> changed_skill_dirs_;  // SKILL.md files to read again
  std::unique_ptr<SkillWatcher> skill_watcher_;          // made with the whole engine
  std::vector<const void*> watched_folders_;             // the SkillPlace::folders watched
  std::function<void(const engine::Engine&)> on_reloaded_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
  // Configured stdio MCP servers, shared by the sessions that would start them identically.
  std::shared_ptr<mcp::McpServerPool> mcp_servers_ = std::make_shared<mcp::McpServerPool>();
  std::map<std::string, support::CancelSourcePtr> running_children_;  // sub-agent sessions by id
  std::shared_ptr<executors::Registry> executors_;
  // The session logs' own thread (made at first use): creating, opening and loading a log must
  // not queue behind the shared pool's work, e.g. 100 MCP server spawns of the session before.
  // Last, so it is joined before the store and the sessions go.
  std::unique_ptr<boost::asio::thread_pool> journal_pool_;
  boost::asio::thread_pool& journal_pool();
};

}  // namespace runtime
