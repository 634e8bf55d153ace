#pragma once
// The limits of `openvaala acp --listen` per server and per connection: how many ACP
// connections may be open at once (a slot each, taken before the connection is made), and how
// many sessions one connection may hold open (new, load, resume, fork count; close frees one).
// A refused connection is answered 503 (HTTP) before anything is made; a refused session is a
// JSON-RPC error the agent never sees.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "acp/transport.hpp"

namespace acp {

class ConnectionSlots;

// One taken connection slot; given back when released or destroyed. Move-only.
class ConnectionSlot {
 public:
  ConnectionSlot() = default;
  explicit ConnectionSlot(std::shared_ptr<ConnectionSlots> owner) : owner_(std::move(owner)) {}
  ConnectionSlot(ConnectionSlot&&) noexcept = default;
  ConnectionSlot& operator=(ConnectionSlot&& other) noexcept;
  ~ConnectionSlot() { release(); }
  void release();

 private:
  std::shared_ptr<ConnectionSlots> owner_;
};

// On the io thread only.
class ConnectionSlots : public std::enable_shared_from_this<ConnectionSlots> {
 public:
  explicit ConnectionSlots(std::size_t max) : max_(max) {}
  // A slot, or nullopt when `max` connections are open.
  std::optional<ConnectionSlot> take();
  std::size_t max() const { return max_; }
  // The body of the 503 answer to a connection over the limit.
  std::string refusal() const;

 private:
  friend class ConnectionSlot;
  std::size_t max_;
  std::size_t used_ = 0;
};

// Wraps a new connection's transport: it keeps `slot` until the peer disconnects, and answers
// a session/new, session/load, session/resume or session/fork that would open more than
// `max_sessions` sessions on this connection with a JSON-RPC error, not passing it on.
std::unique_ptr<Transport> make_limited_transport(std::unique_ptr<Transport> inner, ConnectionSlot slot,
                                                  std::size_t max_sessions);

// The JSON-RPC error code of a refused session (implementation-defined server error range).
inline constexpr int kTooManySessionsCode = -32000;

}  // namespace acp
