// Picks the transport for a server spec, and names the kinds of transport.
#include "bridge/mcp/transport.hpp"

#include "bridge/mcp/errors.hpp"

namespace bridge::mcp {

namespace asio = boost::asio;

const char* transport_name(const TransportSpec& t) {
  switch (t.index()) {
    case 0: return "stdio";
    case 1: return "http";
    case 2: return "sse";
    default: return "acp";
  }
}

std::shared_ptr<Transport> make_transport(asio::any_io_executor ex, const ServerSpec& spec, const TransportDeps& deps) {
  std::string log_id = deps.server_id_for_logs.empty() ? spec.id : deps.server_id_for_logs;
  if (auto* s = std::get_if<StdioSpec>(&spec.transport)) return make_stdio_transport(ex, *s, log_id, deps.spawn_pool);
  if (auto* h = std::get_if<HttpSpec>(&spec.transport)) return make_http_transport(ex, *h, log_id);
  if (auto* s = std::get_if<SseSpec>(&spec.transport)) return make_sse_transport(ex, *s, log_id);
  const auto& a = std::get<AcpSpec>(spec.transport);
  if (!deps.acp) throw McpError(McpError::Kind::Transport, "MCP server " + spec.id + " needs the ACP connection (type acp)");
  return make_acp_transport(ex, *deps.acp, deps.router, a, log_id);
}

}  // namespace bridge::mcp
