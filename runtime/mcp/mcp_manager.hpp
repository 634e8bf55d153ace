#pragma once
// The MCP servers of one session: starts them (all in the background once the session is
// open; the ones still missing before a turn), exposes their tools as runtime::tools::Tool named
// mcp__<id>__<tool>, restarts a server that crashed on its next use, and stops everything on
// close. Configured stdio servers come from the connection's McpServerPool, shared with the
// other sessions that would start them identically; the last session to close stops them.
//
// Wiring (per session; the session manager does this):
//   auto mcp = std::make_shared<McpManager>(deps, configured, from_editor);
//   mcp->start_all();                                   // after the session/new reply
//   auto extra = co_await mcp->tools_for_turn(&cancel); // each turn
//   co_await mcp->close();                              // session closed
//   mcp->kill_now();                                    // shutdown (never blocks)
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
#include "runtime/mcp/mcp_server.hpp"

namespace runtime::mcp {

struct RequiredServerUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
    McpServer::EventFn on_server_event;  // see McpServer::EventFn
    // The connection's shared servers; null: nothing is shared.
    std::shared_ptr<McpServerPool> pool = nullptr;
  };

  // `servers` (configured) are shared through deps.pool when they are stdio; `private_servers`
  // (what the editor gave this session) never are.
  McpManager(Deps deps, std::vector<bridge::mcp::ServerSpec> servers,
             std::vector<bridge::mcp::ServerSpec> private_servers = {});
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
  // Stops every server no other session uses, all at once (stdio: close stdin, 500 ms,
  // SIGTERM, 400 ms, SIGKILL; http: DELETE).
  boost::asio::awaitable<void> close();
  // Teardown for the shutdown path: signals them and returns at once.
  void kill_now();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace runtime::mcp
