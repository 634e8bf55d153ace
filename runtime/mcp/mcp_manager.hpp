#pragma once
// The MCP servers of one session: starts them (all in the background at session start; the
// ones still missing before a turn), exposes their tools as runtime::tools::Tool named
// mcp__<id>__<tool>, restarts a server that crashed on its next use, and stops everything on
// close.
//
// Wiring (per session; the session manager does this):
//   auto mcp = std::make_shared<McpManager>(deps, specs);
//   mcp->start_all();                                   // session opened: in the background
//   auto extra = co_await mcp->tools_for_turn(&cancel); // each turn
//   co_await mcp->close();                              // session closed
//   mcp->kill_now();                                    // shutdown (sync)
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/cancellation.hpp"
#include "bridge/mcp/client.hpp"
#include "bridge/mcp/server_spec.hpp"
#include "runtime/tools/tool.hpp"

#include "bridge/mcp/transport.hpp"

namespace runtime::mcp {

struct RequiredServerUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class ServerState { NotStarted, Starting, Ready, Failed, Crashed, Closed };
const char* state_name(ServerState s);

struct ServerStatus {
  std::string id;
  std::string transport;  // stdio | http | sse | acp
  ServerState state = ServerState::NotStarted;
  std::string error;      // why it failed or crashed
  std::size_t tool_count = 0;
  bool required = false;
};

class McpManager {
 public:
  struct Deps {
    boost::asio::any_io_executor executor;
    bridge::mcp::TransportDeps tunnel;               // for servers the editor runs (MCP over its connection)
    std::vector<std::filesystem::path> roots;        // the session's folders (roots/list)
    // A server failed to start (state Failed), crashed (Crashed) or came back after a crash
    // (Ready); `detail` says why (empty for Ready). For the log and the editor's notices.
    std::function<void(const std::string& server_id, ServerState state, const std::string& detail)> on_server_event;
  };

  McpManager(Deps deps, std::vector<bridge::mcp::ServerSpec> servers);
  ~McpManager();  // kill_now()
  McpManager(const McpManager&) = delete;
  McpManager& operator=(const McpManager&) = delete;

  // Starts every server in the background. Never throws; failures show in status().
  void start_all();
  // Waits for servers still starting, starts the ones not running (again, after a crash),
  // refreshes tool lists that changed, and returns one Tool per offered MCP tool. Throws
  // RequiredServerUnavailable naming the server when a `required` server cannot be reached.
  boost::asio::awaitable<std::vector<std::unique_ptr<tools::Tool>>> tools_for_turn(support::CancelSource* cancel);
  std::vector<ServerStatus> status() const;
  const std::vector<bridge::mcp::ServerSpec>& specs() const;
  // Stops every server (stdio: close stdin, 500 ms, SIGTERM, SIGKILL; http: DELETE).
  boost::asio::awaitable<void> close();
  // Synchronous teardown for the shutdown path.
  void kill_now();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace runtime::mcp
