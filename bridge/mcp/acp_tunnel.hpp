#pragma once
// MCP-over-ACP: MCP servers that live in the editor, reached through the ACP connection.
//
// Current form (ACP SDK >= 1.6, schema.unstable.json): each inner MCP request is one ACP
// request `mcp/message {serverId, requestId, method, params}` answered `{result}` or `{error}`;
// the inner protocol is the stateless MCP revision 2026-07-28 (no initialize; protocol
// version, client capabilities and client info ride in `params._meta`). The provider may
// send `mcp/message` notifications tagged with the same serverId/requestId (progress) while
// the request is active.
//
// Older form (SDK 0.25-1.5): `mcp/connect {serverId}` -> `{connectionId}`, then
// `mcp/message {connectionId, method, params}` (the result is the inner result itself) and
// `mcp/disconnect {connectionId}`. Used when the client answers the first form with -32601.
//
// One AcpTunnelRouter per ACP connection owns the `mcp/message` notification handler and hands
// each notification to the transport whose request it belongs to.
#include <boost/json.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace acp {
class Connection;
}

namespace bridge::mcp {

inline constexpr const char* kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kMetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kMetaClientInfo = "io.modelcontextprotocol/clientInfo";

class AcpTunnelRouter {
 public:
  using Listener = std::function<void(boost::json::object notification)>;

  // Registers the `mcp/message` notification handler on `conn` (replacing any other).
  explicit AcpTunnelRouter(acp::Connection& conn);
  ~AcpTunnelRouter();
  AcpTunnelRouter(const AcpTunnelRouter&) = delete;
  AcpTunnelRouter& operator=(const AcpTunnelRouter&) = delete;

  acp::Connection& connection() { return conn_; }

  // Route keys: request_key(serverId, requestId) or connection_key(connectionId).
  static std::string request_key(const std::string& server_id, const std::string& request_id);
  static std::string connection_key(const std::string& connection_id);
  void add(const std::string& key, Listener listener);
  // Inner request ids, unique on this connection: the editor keys active requests by
  // (serverId, requestId), and sessions that share one editor server each run their own client.
  std::string next_request_id() { return "openvaala-" + std::to_string(++request_counter_); }
  void remove(const std::string& key);

  // The handler body (public for tests): params of an `mcp/message` notification.
  void handle_notification(const boost::json::value& params);

 private:
  acp::Connection& conn_;
  std::map<std::string, Listener> routes_;
  std::uint64_t request_counter_ = 0;
  std::shared_ptr<bool> alive_;
};

}  // namespace bridge::mcp
