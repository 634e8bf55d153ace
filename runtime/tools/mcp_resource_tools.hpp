#pragma once
// list_mcp_resources and read_mcp_resource: the MCP servers' resources for the model, with
// Codex's names, arguments and result shapes (the JSON payload is the tool's text):
//   list_mcp_resources {server?, cursor?} -> {server?, resources: [{server, uri, name, ...}], nextCursor?}
//   read_mcp_resource {server, uri}       -> {server, uri, contents: [{uri, mimeType?, text | blob}]}
// A cursor needs a server (it is that server's); without a server every server is listed.
#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "runtime/tools/tool.hpp"

namespace runtime::tools {

// The payloads above; throw ResourceError with what the model should read when they fail.
struct ResourceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
using ListResourcesFn = std::function<boost::asio::awaitable<boost::json::object>(
    std::optional<std::string> server, std::optional<std::string> cursor, support::CancelSource* cancel)>;
using ReadResourceFn = std::function<boost::asio::awaitable<boost::json::object>(
    std::string server, std::string uri, support::CancelSource* cancel)>;

std::unique_ptr<Tool> make_list_mcp_resources_tool(ListResourcesFn list);
std::unique_ptr<Tool> make_read_mcp_resource_tool(ReadResourceFn read);

}  // namespace runtime::tools
