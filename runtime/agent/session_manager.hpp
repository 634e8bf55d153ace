#pragma once
// The open sessions of one editor connection: opening them (new, load with replay, resume, fork),
// their set-up after the answer, their settings, closing and deleting them, and sub-agent sessions.
// The services it is made of: EngineHost (the engine snapshot), SessionHistory (the journals),
// SessionCatalog (the saved sessions' list), SessionMcp (MCP servers on their executors).
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
#include "runtime/agent/engine_host.hpp"
#include "runtime/agent/remote/session_mcp.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/agent/session_catalog.hpp"
#include "runtime/agent/session_history.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/sessions/session_store.hpp"

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

class SessionManager : private EngineUser {
 public:
  struct Deps {
    boost::asio::any_io_executor io;
    boost::asio::thread_pool* pool = nullptr;
    EditorHost* editor = nullptr;
    bridge::mcp::TransportDeps tunnel;  // MCP servers the editor runs
    std::filesystem::path config_root;
    std::filesystem::path sessions_dir;
    providers::ModelFactory open_model;  // empty: the real provider client
    // Skill places are watched once the whole engine is in (EngineHost::Deps).
    bool watch_skill_files = false;
  };
  explicit SessionManager(Deps deps);
  ~SessionManager() override;

  // The services it is made of, for the server and the turns.
  EngineHost& engines() { return engines_; }
  SessionCatalog& catalog() { return catalog_; }
  SessionMcp& mcp() { return mcp_; }
  AgentLoop& loop() { return loop_; }
  const std::shared_ptr<executors::Registry>& executors() const { return executors_; }

  // The editor is gone: cancel every turn, stop every MCP server now.
  void shutdown();
  // Cancels every turn and sub-agent, and nothing else: for the way out of the process, where the
  // MCP servers' process groups are signalled together (bridge::process) instead of one by one.
  void cancel_all_turns();

  // session/new, load (which shows the whole history through the host before it returns), resume.
  boost::asio::awaitable<std::shared_ptr<Session>> open(OpenRequest request);
  // session/fork: a new session whose journal is a copy of the source's (open or only saved; of a
  // source with a turn in flight, what came before that turn), with the source's mode, agent,
  // model and thought level, opened like a resumed one. The source is untouched.
  boost::asio::awaitable<std::shared_ptr<Session>> fork(OpenRequest request);
  boost::asio::awaitable<void> close(const std::string& id);
  boost::asio::awaitable<void> remove(const std::string& id);
  // Gives a session opened before the engine's extensions were in (or while they did not load)
  // an engine with them, and starts its MCP servers: after the session/new|load answer, and again
  // at a prompt while it has not succeeded (the files are read again, so fixing them is enough).
  // Throws AgentError with the configuration's problems when it does not load. False when
  // `cancel` fired or the session closed first.
  boost::asio::awaitable<bool> complete_set_up(std::shared_ptr<Session> session, support::CancelSource* cancel);
  // Throws AgentError(NotFound).
  std::shared_ptr<Session> find(const std::string& id) const;
  std::vector<std::shared_ptr<Session>> open_sessions() const;
  SessionHistory& history() { return history_; }  // the journals (a rewind, rewind.hpp)

  void set_mode(Session& session, Mode mode);
  void set_agent(Session& session, const std::string& agent);  // throws AgentError(InvalidParams)
  // From the next model request on; the caller checks that `model` is one offered.
  void set_model(Session& session, const std::string& model);
  void set_reasoning_effort(Session& session, const std::string& effort);  // empty: the model's default
  // Then reads the skills and AGENTS.md on it (remote/session_executor.hpp) and moves the MCP
  // servers that follow it. Throws AgentError(InvalidParams).
  boost::asio::awaitable<void> set_executor(Session& session, const std::string& executor);
  void cancel_turn(const std::string& id);  // also a sub-agent's session (see start_child)

  // Gives a sub-agent's conversation (spawn_agent, for editors that show sub-agents) a session of
  // its own: a new id and a journal naming its parent (not listed, loadable on its own).
  // session/cancel with its id fires `cancel` until end_child.
  void start_child(Session& child, const Session& parent, support::CancelSourcePtr cancel);
  // Journals the end of its turn and forgets it.
  void end_child(Session& child, const char* stop_reason);
  // Shows the session's slash commands (the editor's side drops a list shown already).
  void show_commands(Session& session);

 private:
  // EngineUser: the open sessions take a new engine.
  void use_engine(const std::shared_ptr<const engine::Engine>& engine) override;
  std::function<void()> use_skills(const std::shared_ptr<const engine::Engine>& engine,
                                   const std::vector<engine::Engine::SkillSwap>& swaps, bool commands_same) override;
  // The session `open` makes: its roots, engine, settings (saved ones restored), view and journal.
  boost::asio::awaitable<std::shared_ptr<Session>> make_session(OpenRequest& request, std::shared_ptr<const engine::Engine> engine,
                                                                std::optional<sessions::LoadedSession>& loaded);
  // After the answer (posted): the editor is told the session's notices and commands, then set_up.
  void after_answer(const Session& s, OpenRequest::Kind kind, const std::optional<sessions::LoadedSession>& loaded);
  // After the answer: complete_set_up, then the SessionStart hooks; `started` is set at the end.
  // A configuration that does not load is shown as an error notice.
  // `history`: session/load or session/resume answered from the summary of the journal; the
  // conversation is read first, before the first turn can start.
  boost::asio::awaitable<void> set_up(std::shared_ptr<Session> session, OpenRequest::Kind kind,
                                      std::optional<sessions::LoadedSession> history = std::nullopt);
  // The SessionStart hooks (their context joins the first message), then `started` is set.
  boost::asio::awaitable<void> run_session_start_hooks(std::shared_ptr<Session> session, OpenRequest::Kind kind);
  static void restore(Session& s, sessions::LoadedSession& loaded);

  Deps deps_;
  AgentLoop loop_;
  std::shared_ptr<executors::Registry> executors_;
  EngineHost engines_;
  SessionMcp mcp_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
  std::map<std::string, support::CancelSourcePtr> running_children_;  // sub-agent sessions by id
  // Last, so that the journals' thread is joined before the sessions go.
  SessionHistory history_;
  SessionCatalog catalog_;
};

}  // namespace runtime
