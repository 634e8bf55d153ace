#pragma once
// The byte side of an MCP connection: moves whole JSON-RPC messages to and from one server.
// Implementations: stdio (a child process in its own process group), Streamable HTTP, the older
// HTTP+SSE, and MCP-over-ACP. Everything runs on one io_context thread.
//
// Contract:
// - start() connects (spawns, opens the SSE stream, probes the tunnel); it throws McpError.
// - send() never blocks and never throws. When a *request* cannot be delivered, the transport
//   answers it itself with a JSON-RPC error response through on_message, so the client's
//   pending request always completes.
// - on_closed runs at most once, when the connection is gone for good (not after close()).
// - close() stops everything the transport started; handlers are not called afterwards.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "bridge/mcp/server_spec.hpp"

namespace acp {
class Connection;
}

namespace bridge::mcp {

class AcpTunnelRouter;

class Transport : public std::enable_shared_from_this<Transport> {
 public:
  struct Handlers {
    std::function<void(boost::json::object)> on_message;
    std::function<void(std::string reason)> on_closed;
  };

  virtual ~Transport() = default;
  virtual boost::asio::awaitable<void> start(Handlers handlers, std::chrono::milliseconds timeout) = 0;
  virtual void send(boost::json::object message) = 0;
  virtual boost::asio::awaitable<void> close() = 0;
  // Immediate teardown without waiting (shutdown path; the io_context may be about to stop):
  // a stdio server is sent SIGTERM and SIGKILLed after a grace period on a timer, so ending
  // many at once costs one grace period, and never blocks the caller.
  virtual void kill_now() {}
  // Stateless transports (MCP-over-ACP 2026-07-28) have no initialize handshake.
  virtual bool stateless() const { return false; }
  // Called after initialize with the negotiated revision (HTTP sends it as a header).
  virtual void set_protocol_version(const std::string&) {}
  virtual std::string describe() const = 0;
};

struct TransportDeps {
  acp::Connection* acp = nullptr;        // needed for AcpSpec
  AcpTunnelRouter* router = nullptr;     // routes the client's mcp/message notifications
  std::string server_id_for_logs;
  // Where stdio servers are spawned (posix_spawn costs ~1 ms that must not hold up the io
  // thread); null: on the caller's thread.
  boost::asio::thread_pool* spawn_pool = nullptr;
};

// Throws McpError(Transport) when the spec needs something deps lack.
std::shared_ptr<Transport> make_transport(boost::asio::any_io_executor ex, const ServerSpec& spec,
                                          const TransportDeps& deps);

std::shared_ptr<Transport> make_stdio_transport(boost::asio::any_io_executor ex, StdioSpec spec, std::string log_id,
                                                boost::asio::thread_pool* spawn_pool = nullptr);
std::shared_ptr<Transport> make_http_transport(boost::asio::any_io_executor ex, HttpSpec spec, std::string log_id);
std::shared_ptr<Transport> make_sse_transport(boost::asio::any_io_executor ex, SseSpec spec, std::string log_id);
std::shared_ptr<Transport> make_acp_transport(boost::asio::any_io_executor ex, acp::Connection& conn,
                                              AcpTunnelRouter* router, AcpSpec spec, std::string log_id);

}  // namespace bridge::mcp
