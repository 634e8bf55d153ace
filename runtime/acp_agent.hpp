#pragma once
// The protocol-facing agent: binds the ACP agent methods on a Connection and maps them onto
// sessions, the engine (skills, AGENTS.md, agents, hooks, MCP servers) and the turn loop.
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <map>
#include <memory>
#include <string>

#include "acp/client_api.hpp"
#include "acp/connection.hpp"
#include "bridge/mcp/acp_tunnel.hpp"
#include "runtime/agent/agent_loop.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/sessions/session_store.hpp"

namespace runtime {

class AcpAgent {
 public:
  AcpAgent(acp::Connection& conn, boost::asio::thread_pool& pool);
  ~AcpAgent();

  // Re-reads the configuration (SIGHUP, `openvaala serve reload`). A configuration that fails
  // to load keeps the old one; sessions pick up new skills and slash commands.
  void reload_config();
  // The client is gone: cancel every turn, stop every MCP server.
  void shutdown();

 private:
  void bind();
  acp::awaitable<boost::json::value> initialize(boost::json::value params);
  acp::awaitable<boost::json::value> authenticate(boost::json::value params);
  enum class OpenKind { New, Load, Resume };
  // session/new, session/load (replays the history first) and session/resume share this.
  acp::awaitable<boost::json::value> open_session(boost::json::value params, OpenKind kind);
  acp::awaitable<boost::json::value> list_sessions(boost::json::value params);
  acp::awaitable<boost::json::value> delete_session(boost::json::value params);
  void end_turn_record(Session& session, const std::string& stop_reason);
  acp::awaitable<boost::json::value> prompt(boost::json::value params, acp::RequestContext ctx);
  acp::awaitable<boost::json::value> set_mode(boost::json::value params);
  acp::awaitable<boost::json::value> set_config_option(boost::json::value params);
  void cancel(const boost::json::value& params);

  // Shared: a turn keeps its session alive even if session/close removes it meanwhile.
  std::shared_ptr<Session> session_for(const boost::json::value& params);
  std::string system_prompt(const Session& session) const;       // base + skills, agent, AGENTS.md
  std::string base_system_prompt(const Session& session) const;  // the product's instructions + environment
  boost::json::array config_options(const Session& session) const;
  // Recomputes what the session sees of the engine; sends available_commands_update if changed.
  void refresh_view(Session& session);
  void send_commands_if_changed(Session& session);
  void set_session_mode(Session& session, Mode mode);
  // The engine is loaded on a worker thread so `initialize` never waits for the file system;
  // the first session waits for it.
  void start_loading_engine();
  acp::awaitable<std::shared_ptr<const engine::Engine>> loaded_engine();
  // The engine a session opens with. A configuration that fails to load as a whole (a broken
  // plugin manifest: the seed says the service must not start on it) refuses the session with
  // the problems as path:line, instead of running on part of it.
  acp::awaitable<std::shared_ptr<const engine::Engine>> engine_for_session();

  acp::Connection& conn_;
  acp::ClientApi client_;
  boost::asio::thread_pool& pool_;
  AgentLoop loop_;
  std::unique_ptr<tools::Tool> plan_tool_ = tools::make_update_plan_tool();
  bridge::mcp::AcpTunnelRouter tunnel_;
  std::shared_ptr<const engine::Engine> engine_;
  std::unique_ptr<boost::asio::steady_timer> engine_ready_;  // cancelled once engine_ is set
  bool reloading_ = false;
  bool reload_again_ = false;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
  sessions::SessionStore store_;
};

}  // namespace runtime
