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
#include <memory>
#include <string>
#include <vector>

#include "bridge/mcp/client.hpp"
#include "bridge/mcp/server_spec.hpp"
#include "bridge/mcp/transport.hpp"
#include "support/cancellation.hpp"

namespace runtime::mcp {

enum class ServerState { NotStarted, Starting, Ready, Failed, Crashed, Closed };
const char* state_name(ServerState s);

class McpServer : public std::enable_shared_from_this<McpServer> {
 public:
  struct Env {
    boost::asio::any_io_executor executor;
    bridge::mcp::TransportDeps tunnel;          // for servers the editor runs; spawn_pool for stdio
    std::vector<std::filesystem::path> roots;   // the session's folders (roots/list)
  };
  // A server failed to start (state Failed), crashed (Crashed) or came back after a crash
  // (Ready); `detail` says why (empty for Ready). For the log and the editor's notices.
  using EventFn = std::function<void(const std::string& server_id, ServerState state, const std::string& detail)>;

  McpServer(Env env, bridge::mcp::ServerSpec spec);

  const bridge::mcp::ServerSpec& spec() const { return spec_; }
  ServerState state() const { return state_; }
  const std::string& error() const { return error_; }
  const std::vector<bridge::mcp::ToolInfo>& tools() const { return tools_; }

  int subscribe(EventFn fn);
  void unsubscribe(int token);

  // Starts it in the background unless it was started already.
  void start_in_background();
  // Ready afterwards, or Failed/Crashed with error(): waits while it is starting, starts it
  // when not running (again after a crash; after a failure only with retry_failed), refreshes a
  // tool list that changed.
  boost::asio::awaitable<void> ensure(support::CancelSource* cancel, bool retry_failed);
  boost::asio::awaitable<boost::json::object> call(std::string tool, boost::json::object args,
                                                   support::CancelSource* cancel,
                                                   bridge::mcp::Client::ProgressFn progress);
  // Graceful stop (stdio: close stdin, 500 ms, SIGTERM, 400 ms, SIGKILL).
  boost::asio::awaitable<void> close();
  // Signals it and returns at once (the grace period runs on a timer).
  void kill_now();

  int users = 0;  // sessions sharing it (McpServerPool)

 private:
  int begin_start();
  boost::asio::awaitable<void> start(int gen, bool restart);
  void event(const std::string& detail);
  void stop_state();

  Env env_;
  bridge::mcp::ServerSpec spec_;
  std::shared_ptr<bridge::mcp::Client> client_;
  ServerState state_ = ServerState::NotStarted;
  std::string error_;
  std::vector<bridge::mcp::ToolInfo> tools_;
  boost::asio::steady_timer started_;  // waiters park here while Starting
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
