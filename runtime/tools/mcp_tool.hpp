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

// `output_limit`: the most bytes of its result the model and the editor's content get
// (config::McpLimits::output_bytes).
std::unique_ptr<Tool> make_mcp_tool(std::string exposed_name, std::string server_id, bridge::mcp::ToolInfo info,
                                    McpCallFn call, std::size_t output_limit);

// text/image/audio/resource/resource_link content, structuredContent and isError. The model's
// text and the editor's content stay within `output_limit` bytes each, saying what was cut;
// raw_output is the result whole, its one full copy (in the editor's update and the journal).
ToolResult map_mcp_result(const boost::json::object& result, std::size_t output_limit);

}  // namespace runtime::tools
