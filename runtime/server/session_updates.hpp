#pragma once
// The one encoder of `session/update`: every engine event, live or replayed by session/load,
// becomes the ACP `update` object here.
#include <boost/json.hpp>

#include "runtime/protocol/events.hpp"

namespace runtime::server {

boost::json::object encode_update(const SessionEvent& event);

// ACP ToolCall fields (toolCallId plus what is set), for tool_call, tool_call_update and the
// tool call of a permission request.
boost::json::object encode_tool_call(const std::string& id, const ToolCallFields& fields);

}  // namespace runtime::server
