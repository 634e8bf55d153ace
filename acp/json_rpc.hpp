#pragma once
// How both JSON-RPC peers of ours (acp::Connection and bridge::mcp::Client) read a message.
// JSON-RPC 2.0: a message with a "method" is a request when it has an "id" member, whatever the
// id's value (`"id": null` is a request, and its reply has id null), and a notification when it
// has none. And the error object of an error response, read the same way on both sides.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "acp/rpc_error.hpp"

namespace acp::json_rpc {

inline bool is_request(const boost::json::object& msg) { return msg.contains("method") && msg.contains("id"); }
inline bool is_notification(const boost::json::object& msg) { return msg.contains("method") && !msg.contains("id"); }

// The error of an error response: its code (-32603 when missing or not an integer), message
// ("error" when missing) and data (null when missing).
RpcError error_from(const boost::json::value& error);

}  // namespace acp::json_rpc
