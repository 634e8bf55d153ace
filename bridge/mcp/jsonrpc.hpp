#pragma once
// Small JSON-RPC helpers shared by the MCP client and its transports (how a message is read, and
// error objects, are support/json_rpc.hpp's: the same for both peers).
#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace bridge::mcp {

// {"jsonrpc":"2.0","id":id,"error":{code,message}}
boost::json::object error_response(const boost::json::value& id, int code, std::string message);

// Parses one JSON text holding a message or a batch; malformed entries are dropped (logged).
std::vector<boost::json::object> parse_messages(std::string_view text, std::string_view log_id);

}  // namespace bridge::mcp
