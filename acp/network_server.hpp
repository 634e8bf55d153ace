#pragma once
// `openvaala acp --listen`: ACP over the network at one endpoint, `/acp`. A WebSocket upgrade
// there becomes an ACP connection (acp/websocket_transport.hpp); other requests are the
// Streamable HTTP profile (acp/http_stream_transport.hpp). Every request must carry
// `Authorization: Bearer <token>` when a token is set (a WebSocket upgrade may carry it as the
// subprotocol `acp.bearer.<token>` instead: browsers cannot set headers there), else it is
// answered 401 and creates nothing. Requests with an Origin header (browsers) are refused (403)
// unless that origin was allowed (--allow-origin): a web page the user visits must not reach
// the agent. With a certificate and key, everything is served over TLS (https, wss) and a
// plain-text request to the port is dropped. Limits: kMaxMessageBytes a message (413, or the
// WebSocket close code 1009), max_connections ACP connections (503), max_sessions sessions per
// connection (a JSON-RPC error), idle_timeout for a Streamable HTTP connection with no stream.
#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "acp/transport.hpp"

namespace acp {

struct NetworkServerOptions {
  std::string host;
  unsigned short port = 0;  // 0: any free port (see NetworkServer::port)
  std::string token;        // empty: no token (only allowed on a loopback address)
  std::string tls_cert;     // PEM files; both set: https and wss, neither: http and ws
  std::string tls_key;
  std::vector<std::string> allowed_origins;  // browser origins let in; empty: none
  std::size_t max_connections = 256;         // ACP connections open at once
  std::size_t max_sessions = 64;             // sessions open per connection
  std::chrono::steady_clock::duration idle_timeout = std::chrono::minutes(5);  // Streamable HTTP
};

class NetworkServer {
 public:
  // Called on the executor with each new ACP connection's transport, not yet started: the
  // callee builds the connection on it and calls start().
  using OnConnection = std::function<void(std::unique_ptr<Transport>)>;

  // Binds and listens at once; throws std::runtime_error (a message for the user) when the
  // address is not an IP address, or is not loopback while no token is set, or cannot be bound,
  // or a TLS file is missing, unreadable or does not match the other.
  NetworkServer(boost::asio::any_io_executor executor, NetworkServerOptions options, OnConnection on_connection);
  ~NetworkServer();

  unsigned short port() const;
  bool tls() const;  // https/wss
  void start();  // accepts connections until stop()
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace acp
