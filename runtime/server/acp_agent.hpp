#pragma once
// The ACP face of the agent: binds the agent methods on a Connection (only `initialize` until
// the client has initialized, as clangd does), decodes their params, calls the session manager
// and the task, and turns engine errors into JSON-RPC errors. The only runtime code that speaks
// ACP lives in this folder.
#include <boost/asio/thread_pool.hpp>
#include <memory>

#include "acp/client_api.hpp"
#include "acp/connection.hpp"
#include "acp/params.hpp"
#include "bridge/mcp/acp_tunnel.hpp"
#include "runtime/agent/session_manager.hpp"
#include "runtime/agent/steering.hpp"
#include "runtime/agent/task.hpp"
#include "runtime/providers/model_catalog.hpp"
#include "runtime/server/editor_host_acp.hpp"

namespace runtime::server {

class AcpAgent {
 public:
  // `open_model` replaces the provider client (the fuzzer's scripted model); empty in the server.
  // `watch_skill_files`: skills follow their files (SessionManager::Deps); the fuzzer's agent
  // does not watch (file events are not its input, and it runs until idle).
  AcpAgent(acp::Connection& conn, boost::asio::thread_pool& pool, providers::ModelFactory open_model = {},
           bool watch_skill_files = true);
  ~AcpAgent();

  // Re-reads the configuration (SIGHUP, `openvaala serve reload`).
  void reload_config() { sessions_.engines().reload_config(); }
  // The client is gone: cancel every turn, stop every MCP server and the model lists' retries.
  void shutdown() {
    sessions_.engines().stop_watching_skills();
    sessions_.shutdown();
    sessions_.executors()->shutdown();
    models_.stop();
  }
  // The client is gone and the process exits next: cancel every turn and close the executors'
  // connections, but leave the MCP servers to bridge::process::end_all_process_groups_on_exit,
  // which signals every group at once (closing, signalling and polling 100 servers one by one
  // here woke each of them on the way out and cost ~0.3 s with 100 stubborn servers).
  void prepare_exit() {
    sessions_.engines().stop_watching_skills();
    sessions_.cancel_all_turns();
    sessions_.executors()->shutdown();
  }

 private:
  void bind_methods();
  acp::awaitable<boost::json::value> initialize(boost::json::value params);
  acp::awaitable<boost::json::value> authenticate(boost::json::value params);
  acp::awaitable<boost::json::value> logout(boost::json::value params);
  acp::awaitable<boost::json::value> open_session(boost::json::value params, OpenRequest::Kind kind);
  // auth_required (-32000) naming the auth methods when no model can answer a new session.
  acp::awaitable<void> require_model();
  // Why no model can answer a new session ("": one can), the configuration read again first
  // when the one in use has none.
  acp::awaitable<std::string> missing_model();
  acp::awaitable<boost::json::value> end_session(boost::json::value params, bool forget);
  acp::awaitable<boost::json::value> list_sessions(boost::json::value params);
  // The session list's own methods (acp_agent_catalog.cpp): set_title, archive/unarchive, status,
  // and auth/status.
  acp::awaitable<boost::json::value> set_title(boost::json::value params);
  acp::awaitable<boost::json::value> set_archived(boost::json::value params, bool archived);
  acp::awaitable<boost::json::value> session_status(boost::json::value params);
  acp::awaitable<boost::json::value> auth_status(boost::json::value params);
  // auth/status_update when the state differs from the one last reported on this connection.
  acp::awaitable<void> report_auth_status_if_changed();
  acp::awaitable<boost::json::value> prompt(boost::json::value params, acp::RequestContext ctx);
  // _session/steering, and what initialize's `_meta` advertises of it (acp_agent_steering.cpp).
  acp::awaitable<boost::json::value> steer(boost::json::value params);
  static boost::json::object initialize_meta();
  acp::awaitable<boost::json::value> set_mode(boost::json::value params);
  acp::awaitable<boost::json::value> set_config_option(boost::json::value params);
  acp::awaitable<boost::json::value> set_model(boost::json::value params);  // legacy alias of the model option
  acp::awaitable<void> apply_config_option(Session& session, const std::string& config_id, const std::string& value);
  void cancel(const boost::json::value& params);
  std::shared_ptr<Session> find_session(const acp::Params& p);  // -32002 when unknown
  // The session's config options, remembered as what the editor shows.
  boost::json::array shown_config_options(Session& s);
  // A config_option_update with them (set_mode, set_model: answers without the options).
  void send_config_options(Session& s);
  // A config_option_update when they differ from what the editor shows (a model list arrived).
  void send_config_options_if_changed(Session& s);

  acp::Connection& conn_;
  acp::ClientApi client_;
  AcpEditorHost host_;
  bridge::mcp::AcpTunnelRouter tunnel_;
  SessionManager sessions_;
  Task task_;
  Steering steering_{task_, sessions_.loop()};
  providers::ModelCatalog models_;
  bool initialized_ = false;
  std::string auth_state_reported_;  // the last auth state this connection was told
};

}  // namespace runtime::server
