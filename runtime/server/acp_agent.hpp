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
#include "acp/schema/initialize.hpp"
#include "acp/schema/prompt.hpp"
#include "acp/schema/session.hpp"
#include "bridge/mcp/acp_tunnel.hpp"
#include "runtime/agent/session_manager.hpp"
#include "runtime/agent/steering.hpp"
#include "runtime/agent/task.hpp"
#include "runtime/server/acp_auth.hpp"
#include "runtime/server/acp_rewind.hpp"
#include "runtime/server/acp_steering.hpp"
#include "runtime/server/acp_session_catalog.hpp"
#include "runtime/server/acp_session_config.hpp"
#include "runtime/server/agent_errors.hpp"
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
    config_.stop();
  }
  // The client went but its turns run on to their end (a network client may come back and load
  // their sessions): what served only the client stops, the skill watch and the model lists'
  // retries. shutdown() follows once its requests ended.
  void client_gone() {
    sessions_.engines().stop_watching_skills();
    config_.stop();
  }
  // Resumes once the start-up load of the configuration ended (its coroutine uses this agent).
  acp::awaitable<void> settled() { co_await sessions_.engines().skills_loaded(nullptr); }
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
  awaitable<acp::schema::InitializeResponse> initialize(acp::schema::InitializeRequest req);
  static boost::json::object initialize_meta();

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

  // The turn.
  awaitable<acp::schema::PromptResponse> prompt(acp::schema::PromptRequest req, acp::RequestContext ctx);
  // A prompt's session is looked up before its blocks are decoded (-32002 first, nothing copied).
  void check_prompt(const acp::schema::SessionRef& head) { find_open_session(sessions_, head.sessionId); }
  void cancel(acp::schema::CancelNotification n);

  acp::Connection& conn_;
  acp::Binder binder_;
  acp::ClientApi client_;
  AcpEditorHost host_;
  bridge::mcp::AcpTunnelRouter tunnel_;
  SessionManager sessions_;
  Task task_;
  // The method groups with a job of their own.
  AcpAuth auth_;
  AcpSessionCatalog catalog_;
  AcpSessionConfig config_;
  AcpRewind rewind_;
  AcpSteering steering_;
};

}  // namespace runtime::server
