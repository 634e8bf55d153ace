#pragma once
// One MCP server connection and its state: started once, restarted after a crash on its next
// use, its tool list refreshed when the server says it changed. A configured stdio server is
// shared by the sessions of a connection that would start it identically (McpServerPool); each
// session subscribes to hear when it fails, crashes or comes back.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "bridge/mcp/client.hpp"
#include "bridge/mcp/oauth_flow.hpp"
#include "bridge/mcp/server_spec.hpp"
#include "bridge/mcp/transport.hpp"
#include "support/cancellation.hpp"
#include "support/one_shot_event.hpp"

namespace runtime::mcp {

// NeedsSignIn: an http/sse server answered 401 and no token could be had without the user.
enum class ServerState { NotStarted, Starting, Ready, Failed, Crashed, Closed, NeedsSignIn };
const char* state_name(ServerState s);

class McpServer : public std::enable_shared_from_this<McpServer> {
 public:
  struct Env {
    boost::asio::any_io_executor executor;
    bridge::mcp::TransportDeps tunnel;          // for servers the editor runs; spawn_pool for stdio
    std::vector<std::filesystem::path> roots;   // the session's folders (roots/list)
    // What the editor can ask the user (MCP elicitation is offered to servers only then).
    bool elicit_form = false;
    bool elicit_url = false;
    // The server says a URL question is done (told to the editor).
    std::function<void(const std::string& elicitation_id)> elicitation_complete = nullptr;
  };
  // Puts a server's elicitation/create (its params) to the user; returns {action, content?}.
  using ElicitFn = std::function<boost::asio::awaitable<boost::json::object>(boost::json::object params)>;
  // A server failed to start (state Failed), crashed (Crashed) or came back after a crash
  // (Ready); `detail` says why (empty for Ready). For the log and the editor's notices.
  using EventFn = std::function<void(const std::string& server_id, ServerState state, const std::string& detail)>;

  McpServer(Env env, bridge::mcp::ServerSpec spec);

  const bridge::mcp::ServerSpec& spec() const { return spec_; }
  ServerState state() const { return state_; }
  const std::string& error() const { return error_; }
  const std::vector<bridge::mcp::ToolInfo>& tools() const { return tools_; }
  // prompts/list as the server answered it (kept fresh through notifications/prompts/list_changed).
  const boost::json::array& prompts() const { return prompts_; }
  bool has_resources() const;
  // The OAuth side of an http/sse server from the config; null for the others.
  std::shared_ptr<bridge::mcp::oauth::Authorizer> authorizer() const;

  int subscribe(EventFn fn);
  void unsubscribe(int token);
  // Called when the prompt list is known or changed (after start, after list_changed).
  int watch_prompts(std::function<void()> fn);
  void unwatch_prompts(int token);

  // Starts it in the background when it is not running: not started yet, or crashed (restarted).
  void start_in_background();
  // Ready afterwards, or Failed/Crashed with error(): waits while it is starting, starts it
  // when not running (again after a crash; after a failure only with retry_failed), refreshes a
  // tool list that changed.
  boost::asio::awaitable<void> ensure(support::CancelSource* cancel, bool retry_failed);
  // While it runs, the server's questions (elicitation/create) go to `elicit` (the latest
  // running call's, when several share the server; declined when there is none).
  boost::asio::awaitable<boost::json::object> call(std::string tool, boost::json::object args,
                                                   support::CancelSource* cancel,
                                                   bridge::mcp::Client::ProgressFn progress, ElicitFn elicit = nullptr);
  // prompts/get with the arguments by name; the raw result ({description?, messages}).
  boost::asio::awaitable<boost::json::object> get_prompt(std::string name, boost::json::object arguments,
                                                         support::CancelSource* cancel);
  // One page of resources/list: the raw result ({resources, nextCursor?}).
  boost::asio::awaitable<boost::json::object> list_resources(std::optional<std::string> cursor,
                                                             support::CancelSource* cancel);
  // resources/read: the raw result ({contents}).
  boost::asio::awaitable<boost::json::object> read_resource(std::string uri, support::CancelSource* cancel);
  // Whether the server lists a resource with this uri (its list is asked once, again after
  // notifications/resources/list_changed).
  boost::asio::awaitable<bool> lists_resource(std::string uri, support::CancelSource* cancel);
  // Graceful stop (stdio: close stdin, 500 ms, SIGTERM, 400 ms, SIGKILL).
  boost::asio::awaitable<void> close();
  // Signals it and returns at once (the grace period runs on a timer).
  void kill_now();

  int users = 0;  // sessions sharing it (McpServerPool)

 private:
  int begin_start();
  boost::asio::awaitable<void> start(int gen, bool restart);
  bridge::mcp::Client::Options client_options(int gen);
  void offer_elicitation(bridge::mcp::Client::Options& opts);
  void event(const std::string& detail);
  void stop_state();
  boost::asio::awaitable<void> refresh_prompts();
  boost::asio::awaitable<std::shared_ptr<bridge::mcp::Client>> ready_client(support::CancelSource* cancel);
  void prompts_changed();
  // A Ready server whose tokens were refused for good becomes NeedsSignIn.
  void needs_sign_in_check();

  Env env_;
  bridge::mcp::ServerSpec spec_;
  std::shared_ptr<bridge::mcp::Client> client_;
  ServerState state_ = ServerState::NotStarted;
  std::string error_;
  std::vector<bridge::mcp::ToolInfo> tools_;
  boost::json::array prompts_;
  std::optional<std::vector<std::string>> resource_uris_;  // unknown until asked
  std::vector<std::pair<int, ElicitFn>> elicitors_;          // running calls, latest last
  std::map<int, std::function<void()>> prompt_watchers_;
  support::OneShotEvent started_;  // waiters park here while Starting; set when a start ends
  int generation_ = 0;
  std::map<int, EventFn> subscribers_;
  int next_token_ = 1;
};

// The configured stdio servers of one editor connection, by what starts them: the same id,
// command, arguments, environment, working directory and session folders give the same process.
class McpServerPool {
 public:
  // The running (or starting) server for `spec`, or a new one; counts one more user.
  std::shared_ptr<McpServer> acquire(const bridge::mcp::ServerSpec& spec, const McpServer::Env& env);
  // One user fewer; true when it was the last (then the caller stops it).
  bool release(const std::shared_ptr<McpServer>& server);
  std::size_t size() const { return servers_.size(); }

  // Whether a server is shared at all: processes we spawn from the user's config, not what the
  // editor gave one session.
  static bool shareable(const bridge::mcp::ServerSpec& spec);

 private:
  std::map<std::string, std::shared_ptr<McpServer>> servers_;
};

}  // namespace runtime::mcp
