#pragma once
// How an MCP operation failed. Rpc carries the server's JSON-RPC error; the rest are ours.
#include <stdexcept>
#include <string>

namespace bridge::mcp {

class McpError : public std::runtime_error {
 public:
  enum class Kind {
    Rpc,        // the server answered with a JSON-RPC error (code())
    Timeout,    // no answer in time (the server was sent notifications/cancelled)
    Cancelled,  // the caller cancelled (the server was sent notifications/cancelled)
    Closed,     // the connection is gone (process exited, stream ended, client disconnected)
    Transport,  // could not send or connect (spawn failed, HTTP error, ...)
    Protocol,   // the server broke the protocol (bad version, malformed reply)
  };
  McpError(Kind kind, std::string message, int code = 0)
      : std::runtime_error(std::move(message)), kind_(kind), code_(code) {}
  Kind kind() const { return kind_; }
  int code() const { return code_; }

 private:
  Kind kind_;
  int code_;
};

}  // namespace bridge::mcp
