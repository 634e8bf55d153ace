#pragma once
// The ACP face of the agent (the Rust SDK's `Agent` trait): one typed member per method, bound
// by acp::Binder (only `initialize` until the client has initialized, as clangd does), which
// decodes the params (acp/schema) and encodes the answers. The members call the session manager
// and the task, and turn engine errors into JSON-RPC errors. The only runtime code that speaks
// ACP lives in this folder.
#include <boost/asio/thread_pool.hpp>
#include <memory>

#include "acp/binder.hpp"
#include "acp/client_api.hpp"
#include "acp/connection.hpp"
#include "acp/schema/config.hpp"
#include "acp/schema/initialize.hpp"
#include "acp/schema/prompt.hpp"
#include "acp/schema/session.hpp"
#include "bridge/mcp/acp_tunnel.hpp"
#include "runtime/agent/session_manager.hpp"
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
  using Empty = acp::EmptyResponse;
  template <class T>
  using awaitable = acp::awaitable<T>;

  void bind_methods();
  // initialize and authentication (auth/status in acp_agent_catalog.cpp).
  awaitable<acp::schema::InitializeResponse> initialize(acp::schema::InitializeRequest req);
  awaitable<Empty> authenticate(acp::schema::AuthenticateRequest req);
  awaitable<Empty> logout(acp::NoParams);
  awaitable<acp::schema::AuthStatus> auth_status(acp::NoParams);
  // auth/status_update when the state differs from the one last reported on this connection.
  awaitable<void> report_auth_status_if_changed();
  // auth_required (-32000) naming the auth methods when no model can answer a new session.
  awaitable<void> require_model();
  // Why no model can answer a new session ("": one can), the configuration read again first
  // when the one in use has none.
  awaitable<std::string> missing_model();

  // The session lifecycle.
  awaitable<acp::schema::NewSessionResponse> new_session(acp::schema::NewSessionRequest req);
  awaitable<acp::schema::LoadSessionResponse> load_session(acp::schema::LoadSessionRequest req);
  awaitable<acp::schema::LoadSessionResponse> resume_session(acp::schema::ResumeSessionRequest req);
  awaitable<acp::schema::NewSessionResponse> fork_session(acp::schema::ForkSessionRequest req);
  awaitable<acp::schema::NewSessionResponse> open_session(const acp::schema::SessionSetup& setup,
                                                          const std::string& session_id, OpenRequest::Kind kind);
  awaitable<Empty> close_session(acp::schema::SessionRef req);
  awaitable<Empty> delete_session(acp::schema::SessionRef req);
  awaitable<void> end_session(const std::string& id, bool forget);
  awaitable<acp::schema::ListSessionsResponse> list_sessions(acp::schema::ListSessionsRequest req);
  // The session list's own methods (acp_agent_catalog.cpp): set_title, archive/unarchive, status.
  awaitable<acp::schema::SetSessionTitleResponse> set_title(acp::schema::SetSessionTitleRequest req);
  awaitable<Empty> archive(acp::schema::SessionRef req);
  awaitable<Empty> unarchive(acp::schema::SessionRef req);
  awaitable<void> set_archived(const std::string& id, bool archived);
  awaitable<acp::schema::SessionStatusResponse> session_status(acp::schema::SessionRef req);

  // The turn and the pickers.
  awaitable<acp::schema::PromptResponse> prompt(acp::schema::PromptRequest req, acp::RequestContext ctx);
  // A prompt's session is looked up before its blocks are decoded (-32002 first, nothing copied).
  void check_prompt(const acp::schema::SessionRef& head) { find_session(head.sessionId); }
  void cancel(acp::schema::CancelNotification n);
  awaitable<Empty> set_mode(acp::schema::SetSessionModeRequest req);
  awaitable<acp::schema::SetSessionConfigOptionResponse> set_config_option(acp::schema::SetSessionConfigOptionRequest req);
  awaitable<Empty> set_model(acp::schema::SetSessionModelRequest req);  // legacy alias of the model option
  awaitable<void> apply_config_option(Session& session, const std::string& config_id, const std::string& value);
  std::shared_ptr<Session> find_session(const std::string& id);  // -32002 when unknown
  // The session's config options, remembered as what the editor shows.
  std::vector<acp::schema::SessionConfigOption> shown_config_options(Session& s);
  // A config_option_update with them (set_mode, set_model: answers without the options).
  void send_config_options(Session& s);
  // A config_option_update when they differ from what the editor shows (a model list arrived).
  void send_config_options_if_changed(Session& s);

  acp::Connection& conn_;
  acp::Binder binder_;
  acp::OutgoingNotification<acp::schema::AuthStatus> auth_status_update_;
  acp::ClientApi client_;
  AcpEditorHost host_;
  bridge::mcp::AcpTunnelRouter tunnel_;
  SessionManager sessions_;
  Task task_;
  providers::ModelCatalog models_;
  std::string auth_state_reported_;  // the last auth state this connection was told
};

}  // namespace runtime::server
