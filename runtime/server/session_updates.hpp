#pragma once
// The one encoder of `session/update`: every engine event, live or replayed by session/load,
// becomes the ACP `update` object here, in the form the client said it can show (notices and
// compactions as their own updates, or as agent message text).
#include <boost/json.hpp>
#include <optional>

#include "acp/client_api.hpp"

#include "runtime/protocol/events.hpp"

namespace runtime::server {

// nullopt: nothing for this client (a compaction summary delta for a client without compaction view).
std::optional<boost::json::object> encode_update(const SessionEvent& event, const acp::ClientCapabilities& client);

// ACP ToolCall fields (toolCallId plus what is set), for tool_call, tool_call_update and the
// tool call of a permission request.
boost::json::object encode_tool_call(const std::string& id, const ToolCallFields& fields);

}  // namespace runtime::server
