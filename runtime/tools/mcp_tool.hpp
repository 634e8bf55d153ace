#pragma once
// An MCP tool as the model sees it (mcp__<server>__<tool>), and the mapping of a tools/call
// result to the model's text and the editor's ToolCallContent.
#include <boost/json.hpp>
#include <memory>
#include <string>

#include "bridge/mcp/client.hpp"
#include "runtime/tools/tool.hpp"

namespace runtime::mcp {
class McpManager;
}

namespace runtime::tools {

// Puts the server's elicitation/create (its params) to the user while the call runs.
using McpElicitFn = std::function<boost::asio::awaitable<boost::json::object>(boost::json::object params)>;
// Calls the tool on the named server through the manager (restarting the server if needed).
using McpCallFn = std::function<boost::asio::awaitable<boost::json::object>(
    const std::string& tool, boost::json::object args, support::CancelSource* cancel,
    bridge::mcp::Client::ProgressFn on_progress, McpElicitFn elicit)>;

std::unique_ptr<Tool> make_mcp_tool(std::string exposed_name, std::string server_id, bridge::mcp::ToolInfo info,
                                    McpCallFn call);

// text/image/audio/resource/resource_link content, structuredContent and isError.
ToolResult map_mcp_result(const boost::json::object& result);

}  // namespace runtime::tools
