#pragma once
// The MCP servers of one session: starts them (all in the background at session start; the
// ones still missing before a turn), exposes their tools as runtime::tools::Tool named
// mcp__<id>__<tool>, restarts a server that crashed on its next use, and stops everything on
// close.
//
// Wiring (per session, see docs in the final report):
//   runtime::mcp::McpManager::Deps deps{conn.executor(), &conn, &router, {session.cwd}};
//   session_mcp = std::make_shared<runtime::mcp::McpManager>(deps, specs);
//   session_mcp->start_all();                                   // session/new: background
//   auto extra = co_await session_mcp->tools_for_turn(&cancel); // each turn; throws acp::RpcError
//   co_await session_mcp->close();                              // session/close
//   session_mcp->kill_now();                                    // shutdown (sync)
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "acp/cancellation.hpp"
#include "bridge/mcp/client.hpp"
#include "bridge/mcp/server_spec.hpp"
#include "runtime/tools/tool.hpp"

namespace acp {
class Connection;
}
namespace bridge::mcp {
class AcpTunnelRouter;
}

namespace runtime::mcp {

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
    acp::Connection* acp = nullptr;                  // for `acp` servers (MCP-over-ACP)
    bridge::mcp::AcpTunnelRouter* router = nullptr;  // one per ACP connection
    std::vector<std::filesystem::path> roots;        // the session's folders (roots/list)
    // A server failed to start, crashed or came back; for the editor log / a session update.
    std::function<void(const std::string& server_id, const std::string& message)> on_server_event;
  };

  McpManager(Deps deps, std::vector<bridge::mcp::ServerSpec> servers);
  ~McpManager();  // kill_now()
  McpManager(const McpManager&) = delete;
  McpManager& operator=(const McpManager&) = delete;

  // Starts every server in the background. Never throws; failures show in status().
  void start_all();
  // Waits for servers still starting, starts the ones not running (again, after a crash),
  // refreshes tool lists that changed, and returns one Tool per offered MCP tool. Throws
  // acp::RpcError (-32603) naming the server when a `required` server cannot be reached.
  boost::asio::awaitable<std::vector<std::unique_ptr<tools::Tool>>> tools_for_turn(acp::CancelSource* cancel);
  std::vector<ServerStatus> status() const;
  const std::vector<bridge::mcp::ServerSpec>& specs() const;
  // Stops every server (stdio: close stdin, 500 ms, SIGTERM, SIGKILL; http: DELETE).
  boost::asio::awaitable<void> close();
  // Synchronous teardown for the shutdown path.
  void kill_now();

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace runtime::mcp
