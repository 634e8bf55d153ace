#include "runtime/tools/mcp_resource_tools.hpp"

#include "support/json_read.hpp"

namespace runtime::tools {

namespace json = boost::json;

namespace {

json::object string_property(const char* description) {
  return json::object{{"type", "string"}, {"description", description}};
}

// An optional string argument: absent, null or blank is none.
std::optional<std::string> optional_arg(const json::object& args, std::string_view key) {
  auto v = support::str_at(args, key);
  if (v.find_first_not_of(" \t\r\n") == std::string_view::npos) return std::nullopt;
  return std::string(v);
}

ToolResult payload_result(const json::object& payload) {
  ToolResult r;
  r.text = json::serialize(payload);
  r.content.push_back(TextContent{r.text});
  r.raw_output = payload;
  return r;
}

// Both tools: no question asked (they only read what the servers offer: no approval() of their
// own), the payload as text.
class ResourceTool : public Tool {
 public:
  boost::asio::awaitable<ToolResult> run(ToolContext& ctx, const json::object& args) override {
    try {
      auto payload = co_await fetch(args, &ctx.cancel());
      co_return payload_result(payload);
    } catch (const ResourceError& e) {
      if (ctx.cancel().cancelled()) throw ToolCancelled();
      co_return error_result(e.what());
    }
  }

 protected:
  virtual boost::asio::awaitable<json::object> fetch(const json::object& args, support::CancelSource* cancel) = 0;
};

class ListResourcesTool : public ResourceTool {
 public:
  explicit ListResourcesTool(ListResourcesFn list) : list_(std::move(list)) {}
  std::string name() const override { return "list_mcp_resources"; }
  ToolSpec spec() const override {
    return {name(),
            "Lists resources provided by MCP servers. Resources give context such as files, database schemas or "
            "application-specific information. Prefer resources over web search when possible.",
            json::object{{"type", "object"},
                         {"properties",
                          json::object{{"server", string_property("Optional MCP server name. When omitted, lists "
                                                                  "resources from every configured server.")},
                                       {"cursor", string_property("Opaque cursor returned by a previous "
                                                                  "list_mcp_resources call for the same server.")}}},
                         {"additionalProperties", false}}};
  }
  ToolDescription describe(const json::object& args, const ToolEnv&) const override {
    auto server = optional_arg(args, "server");
    return {"List MCP resources" + (server ? " of " + *server : std::string()), ToolKind::Search, {}};
  }

 private:
  boost::asio::awaitable<json::object> fetch(const json::object& args, support::CancelSource* cancel) override {
    auto server = optional_arg(args, "server");
    auto cursor = optional_arg(args, "cursor");
    if (cursor && !server) throw ResourceError("cursor can only be used when a server is specified");
    co_return co_await list_(std::move(server), std::move(cursor), cancel);
  }
  ListResourcesFn list_;
};

class ReadResourceTool : public ResourceTool {
 public:
  explicit ReadResourceTool(ReadResourceFn read) : read_(std::move(read)) {}
  std::string name() const override { return "read_mcp_resource"; }
  ToolSpec spec() const override {
    return {name(),
            "Read a specific resource from an MCP server given the server name and resource URI.",
            json::object{{"type", "object"},
                         {"properties",
                          json::object{{"server", string_property("MCP server name exactly as configured. Must match "
                                                                  "the 'server' field returned by list_mcp_resources.")},
                                       {"uri", string_property("Resource URI to read. Must be one of the URIs returned "
                                                               "by list_mcp_resources.")}}},
                         {"required", json::array{"server", "uri"}},
                         {"additionalProperties", false}}};
  }
  ToolDescription describe(const json::object& args, const ToolEnv&) const override {
    return {"Read MCP resource " + std::string(support::str_at(args, "uri")), ToolKind::Read, {}};
  }

 private:
  boost::asio::awaitable<json::object> fetch(const json::object& args, support::CancelSource* cancel) override {
    auto server = optional_arg(args, "server");
    auto uri = optional_arg(args, "uri");
    if (!server) throw ResourceError("server is required");
    if (!uri) throw ResourceError("uri is required");
    co_return co_await read_(*server, *uri, cancel);
  }
  ReadResourceFn read_;
};

}  // namespace

std::unique_ptr<Tool> make_list_mcp_resources_tool(ListResourcesFn list) {
  return std::make_unique<ListResourcesTool>(std::move(list));
}

std::unique_ptr<Tool> make_read_mcp_resource_tool(ReadResourceFn read) {
  return std::make_unique<ReadResourceTool>(std::move(read));
}

}  // namespace runtime::tools
