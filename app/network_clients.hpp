#pragma once
// The clients of `openvaala acp --listen`: one acp::Connection and AcpAgent per network
// connection, all on one io_context and one pool. A client that drops leaves its turns running
// to their end (journaled, so that a reconnecting editor loads them; its pending permission
// requests answer `cancelled`, its calls to the editor fail); once none of its requests is in
// flight its agent shuts down (its MCP servers, those tunnelled over the connection too, end)
// and, after a grace period for what that started, its objects are freed.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <memory>

#include "acp/connection.hpp"
#include "acp/transport.hpp"
#include "runtime/server/acp_agent.hpp"

namespace app {

class NetworkClients {
 public:
  NetworkClients(boost::asio::io_context& ioc, boost::asio::thread_pool& pool) : ioc_(ioc), pool_(pool) {}

  // A new connection's transport, not yet started.
  void serve(std::unique_ptr<acp::Transport> transport);
  // SIGHUP: the clients still connected read the configuration again.
  void reload_config();
  // The process stops (SIGTERM, SIGINT): every running turn is cancelled; `done` runs once they
  // all ended (their ends journaled) or `deadline` passed.
  void stop(std::chrono::steady_clock::duration deadline, std::function<void()> done);
  // After the io_context stopped: what is queued for the clients still connected is written.
  void flush_and_stop();
  std::size_t size() const { return clients_.size(); }

 private:
  struct Client {
    std::unique_ptr<acp::Transport> transport;
    std::unique_ptr<acp::Connection> conn;
    std::unique_ptr<runtime::server::AcpAgent> agent;
    bool gone = false;
    bool retiring = false;
  };
  using Handle = std::list<Client>::iterator;

  void disconnected(Handle client);
  void retire(Handle client);
  boost::asio::awaitable<void> free_when_settled(Handle client);
  boost::asio::awaitable<void> wait_for_requests(std::chrono::steady_clock::time_point until);

  boost::asio::io_context& ioc_;
  boost::asio::thread_pool& pool_;
  std::list<Client> clients_;
};

}  // namespace app
