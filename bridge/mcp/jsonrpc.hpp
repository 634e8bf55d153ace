#pragma once
// Small JSON-RPC helpers shared by the MCP client and its transports.
#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace bridge::mcp {

struct RpcErrorInfo {
  int code = -32603;
  std::string message = "error";
};

RpcErrorInfo parse_error_object(const boost::json::value& err);

// {"jsonrpc":"2.0","id":id,"error":{code,message}}
boost::json::object error_response(const boost::json::value& id, int code, std::string message);

// True for a message that expects a response (has a method and a non-null id).
bool is_request(const boost::json::object& msg);

// Parses one JSON text holding a message or a batch; malformed entries are dropped (logged).
std::vector<boost::json::object> parse_messages(std::string_view text, std::string_view log_id);

}  // namespace bridge::mcp
