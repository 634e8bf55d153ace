#pragma once
// A session's MCP manager, its configured servers placed on their executors (DESIGN §10) and the
// editor's own servers beside them: made (nothing started), made again when an executor switch
// moves a server or when the executor of a required server left out answers again.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bridge/mcp/server_spec.hpp"
#include "bridge/mcp/transport.hpp"
#include "runtime/agent/remote/mcp_placement.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/mcp/mcp_server.hpp"
#include "runtime/protocol/editor_host.hpp"

namespace runtime {

class SessionMcp {
 public:
  struct Deps {
    boost::asio::any_io_executor io;
    boost::asio::thread_pool* pool = nullptr;
    EditorHost* editor = nullptr;
    bridge::mcp::TransportDeps tunnel;  // MCP servers the editor runs
    std::function<bool(const std::string& id)> is_open;  // the session is (still) open
    std::function<void(Session&)> show_commands;         // its prompts are slash commands
  };
  explicit SessionMcp(Deps deps) : deps_(std::move(deps)) {}

  // The agent's configured servers, then the editor's (an editor server replaces one of its id).
  // `links`: executors that could not be connected (and why), ports forwarded to http/sse servers.
  // Nothing starts here (McpManager::start_all).
  void make(const std::shared_ptr<Session>& session, std::vector<bridge::mcp::ServerSpec> editor_servers,
            const McpExecutorLinks& links);
  // Reaches the executors of the session's configured servers, then `make`. False when the
  // session closed meanwhile or got a manager by another path.
  boost::asio::awaitable<bool> connect_and_make(std::shared_ptr<Session> session,
                                                std::vector<bridge::mcp::ServerSpec> editor_servers);
  // A configured server runs on the session's executor when its `executors:` lists it: after a
  // switch from `before` that moves any of them, the session's servers are stopped and started
  // again where they now belong.
  boost::asio::awaitable<void> follow_executor(std::shared_ptr<Session> session, const std::string& before);
  // Before a turn: a required server left out because its executor did not answer is placed
  // once that executor answers; throws mcp::RequiredServerUnavailable while one is still out.
  boost::asio::awaitable<void> place_required(std::shared_ptr<Session> session);

 private:
  boost::asio::awaitable<void> restart(std::shared_ptr<Session> session);

  Deps deps_;
  // Configured stdio MCP servers, shared by the sessions that would start them identically.
  std::shared_ptr<mcp::McpServerPool> servers_ = std::make_shared<mcp::McpServerPool>();
};

}  // namespace runtime
