#pragma once
// `openvaala acp --listen`: ACP over the network at one endpoint, `/acp`. A WebSocket upgrade
// there becomes an ACP connection (acp/websocket_transport.hpp); other requests are the
// Streamable HTTP profile (acp/http_stream_transport.hpp). Every request must carry
// `Authorization: Bearer <token>` when a token is set, else it is answered 401 and creates
// nothing. Requests with an Origin header (browsers) are refused: a web page the user visits
// must not reach the agent, and no allow-list is configured yet.
#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <string>

#include "acp/transport.hpp"

namespace acp {

struct NetworkServerOptions {
  std::string host;
  unsigned short port = 0;  // 0: any free port (see NetworkServer::port)
  std::string token;        // empty: no token (only allowed on a loopback address)
};

class NetworkServer {
 public:
  // Called on the executor with each new ACP connection's transport, not yet started: the
  // callee builds the connection on it and calls start().
  using OnConnection = std::function<void(std::unique_ptr<Transport>)>;

  // Binds and listens at once; throws std::runtime_error (a message for the user) when the
  // address is not an IP address, or is not loopback while no token is set, or cannot be bound.
  NetworkServer(boost::asio::any_io_executor executor, NetworkServerOptions options, OnConnection on_connection);
  ~NetworkServer();

  unsigned short port() const;
  void start();  // accepts connections until stop()
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace acp
