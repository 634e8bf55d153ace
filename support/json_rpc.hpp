#pragma once
// How both JSON-RPC peers of ours (acp::Connection and bridge::mcp::Client) read a message.
// JSON-RPC 2.0: a message with a "method" is a request when it has an "id" member, whatever the
// id's value (`"id": null` is a request, and its reply has id null), and a notification when it
// has none. And the error object of an error response, read the same way on both sides.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>

namespace support::json_rpc {

// The error codes JSON-RPC 2.0 defines (a protocol's own codes are its own: acp/rpc_error.hpp).
namespace error_code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
}  // namespace error_code

inline bool is_request(const boost::json::object& msg) { return msg.contains("method") && msg.contains("id"); }
inline bool is_notification(const boost::json::object& msg) { return msg.contains("method") && !msg.contains("id"); }

// The error object of an error response.
struct ErrorObject {
  int code = error_code::kInternalError;
  std::string message;
  boost::json::value data;  // null when missing
};

// Its code (-32603 when missing or not an integer), message ("error" when missing) and data.
ErrorObject error_from(const boost::json::value& error);

}  // namespace support::json_rpc
