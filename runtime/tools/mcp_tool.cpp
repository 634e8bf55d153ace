// mcp__<server>__<tool>: an MCP server's tool. Asks permission like a command (it can do
// anything), calls tools/call with the server's timeout, and keeps every kind of content.
#include "runtime/tools/mcp_tool.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "support/json_read.hpp"
#include "support/text.hpp"

namespace runtime::tools {

namespace json = boost::json;
using bridge::mcp::McpError;

namespace {

std::string str(const json::object& o, std::string_view key) { return std::string(support::str_at(o, key)); }

ToolContent content_block(json::object block) { return BlockContent{std::move(block)}; }

// The first `limit` bytes of `text` (never half a character); "" when it fits.
std::string cut_at(std::string& text, std::size_t limit) {
  if (text.size() <= limit) return {};
  const std::string total = std::to_string(text.size());
  text.resize(support::utf8_prefix_length(text, limit));
  return total;
}

// A result in every later request: one too large for the model's context would end the session.
std::string cut_for_model(std::string text, std::size_t limit) {
  const std::string total = cut_at(text, limit);
  if (total.empty()) return text;
  return text + "\n\n[The MCP tool's result was cut: it is " + total + " bytes, the first " + std::to_string(text.size()) +
         " are above (max_mcp_output_bytes in config.yaml). If you need more, ask the tool for less at a time: a "
         "narrower query, a page, a range.]";
}

// The editor's copy stays within the limit too (the whole result is its rawOutput): text blocks
// are cut, other blocks (images, resources) that do not fit are named instead.
void cut_for_editor(std::vector<ToolContent>& content, std::size_t limit) {
  std::size_t used = 0;
  const std::string where = " (over max_mcp_output_bytes; the whole result is in rawOutput)]";
  for (auto& item : content) {
    const std::size_t left = limit - std::min(limit, used);
    if (auto* t = std::get_if<TextContent>(&item)) {
      if (auto total = cut_at(t->text, left); !total.empty()) t->text += "\n[... cut: " + total + " bytes in all" + where;
      used += t->text.size();
    } else if (auto* b = std::get_if<BlockContent>(&item)) {
      const std::size_t size = json::serialize(b->block).size();
      if (size > left) item = TextContent{"[" + str(b->block, "type") + " left out: " + std::to_string(size) + " bytes" + where};
      else used += size;
    }
  }
}

// The server's questions go to the editor, scoped to this session and tool call; the MCP params
// become the ACP request as they are (mode "form" when the server named none).
McpElicitFn elicit_through(ToolContext& ctx) {
  return [&ctx](json::object params) -> boost::asio::awaitable<json::object> {
    if (!params.contains("mode")) params["mode"] = "form";
    params.erase("_meta");
    co_return co_await ctx.elicit(std::move(params));
  };
}

class McpTool : public Tool {
 public:
  McpTool(std::string name, std::string server_id, bridge::mcp::ToolInfo info, McpCallFn call, std::size_t output_limit)
      : name_(std::move(name)),
        server_id_(std::move(server_id)),
        info_(std::move(info)),
        call_(std::move(call)),
        output_limit_(output_limit) {}

  std::string name() const override { return name_; }

  ToolSpec spec() const override {
    std::string desc = info_.description;
    if (desc.empty()) desc = info_.title.empty() ? info_.name : info_.title;
    desc += " (MCP tool '" + info_.name + "' of server '" + server_id_ + "')";
    return {name_, desc, info_.input_schema};
  }

  ToolDescription describe(const json::object&, const ToolEnv&) const override {
    ToolDescription d;
    d.title = (info_.title.empty() ? info_.name : info_.title) + " (" + server_id_ + " MCP)";
    d.kind = ToolKind::Other;
    if (auto* a = info_.annotations.if_object())
      if (auto* ro = a->if_contains("readOnlyHint"); ro && ro->is_bool() && ro->as_bool()) d.kind = ToolKind::Read;
    return d;
  }

  // Asked like a command: it can do anything.
  boost::asio::awaitable<ApprovalRequest> approval(ToolContext&, const json::object&) override {
    ApprovalRequest request;
    request.permission = Permission::Execute;
    request.keys = {"mcp:" + server_id_ + "/" + info_.name};  // remembered by server and tool
    request.keys_label = "`" + info_.name + "` of " + server_id_;
    co_return request;
  }

  boost::asio::awaitable<ToolResult> run(ToolContext& ctx, const json::object& args) override {
    bridge::mcp::Client::ProgressFn on_progress = [&ctx](const json::object& p) {
      std::string text = "Progress";
      if (auto* v = p.if_contains("progress"); v && v->is_number()) text += " " + json::serialize(*v);
      if (auto* v = p.if_contains("total"); v && v->is_number()) text += "/" + json::serialize(*v);
      if (auto m = str(p, "message"); !m.empty()) text += ": " + m;
      ToolCallFields shown;
      shown.content = std::vector<ToolContent>{TextContent{text}};
      ctx.update(std::move(shown));
    };
    json::object result;
    try {
      json::object call_args = args;
      support::CancelSource* cancel = &ctx.cancel();
      result = co_await call_(info_.name, std::move(call_args), cancel, std::move(on_progress), elicit_through(ctx));
    } catch (const McpError& e) {
      if (e.kind() == McpError::Kind::Cancelled || ctx.cancel().cancelled()) throw ToolCancelled();
      std::string what;
      switch (e.kind()) {
        case McpError::Kind::Rpc:
          what = "The MCP server '" + server_id_ + "' returned an error for " + info_.name + ": " + e.what() +
                 " (code " + std::to_string(e.code()) + ")";
          break;
        case McpError::Kind::Timeout:
          what = "The MCP tool " + info_.name + " of server '" + server_id_ + "' timed out: " + e.what();
          break;
        case McpError::Kind::Closed:
          what = "The MCP server '" + server_id_ + "' stopped while running " + info_.name + ": " + e.what() +
                 ". It will be restarted on the next call.";
          break;
        default:
          what = "The MCP server '" + server_id_ + "' is not available: " + e.what();
      }
      co_return error_result(what);
    }
    co_return map_mcp_result(result, output_limit_);
  }

 private:
  std::string name_;
  std::string server_id_;
  bridge::mcp::ToolInfo info_;
  McpCallFn call_;
  std::size_t output_limit_;
};

}  // namespace

std::unique_ptr<Tool> make_mcp_tool(std::string exposed_name, std::string server_id, bridge::mcp::ToolInfo info,
                                    McpCallFn call, std::size_t output_limit) {
  return std::make_unique<McpTool>(std::move(exposed_name), std::move(server_id), std::move(info), std::move(call),
                                   output_limit);
}

namespace {

// The text the model gets for an embedded resource, and its block for the editor.
std::string map_resource(const json::object& res, std::vector<ToolContent>& content) {
  auto uri = str(res, "uri");
  json::object er{{"uri", uri}};
  if (auto m = str(res, "mimeType"); !m.empty()) er["mimeType"] = m;
  std::string text;
  if (res.contains("text")) {
    er["text"] = str(res, "text");
    text = "<resource uri=\"" + uri + "\">\n" + str(res, "text") + "\n</resource>";
  } else {
    er["blob"] = str(res, "blob");
    text = "[resource " + uri + " (binary)]";
  }
  content.push_back(content_block(json::object{{"type", "resource"}, {"resource", std::move(er)}}));
  return text;
}

std::string map_resource_link(const json::object& o, std::vector<ToolContent>& content) {
  auto uri = str(o, "uri");
  auto name = str(o, "name");
  json::object link{{"type", "resource_link"}, {"uri", uri}, {"name", name.empty() ? uri : name}};
  for (const char* k : {"title", "description", "mimeType"})
    if (auto v = str(o, k); !v.empty()) link[k] = v;
  if (auto* sz = o.if_contains("size"); sz && sz->is_int64()) link["size"] = *sz;
  content.push_back(content_block(std::move(link)));
  return "[resource link: " + (name.empty() ? uri : name) + " (" + uri + ")" +
         (str(o, "description").empty() ? "" : " — " + str(o, "description")) + "]";
}

// One item of a CallToolResult's content: the model's text for it (none for an item that is not
// an object or a resource without its body); its block for the editor goes into `r.content`.
std::optional<std::string> map_content_item(const json::value& item, ToolResult& r, bool& any_text) {
  const json::object* o = item.if_object();
  if (!o) return std::nullopt;
  auto type = str(*o, "type");
  if (type == "text") {
    auto t = str(*o, "text");
    any_text = true;
    r.content.push_back(TextContent{t});
    return t;
  }
  if (type == "image" || type == "audio") {
    auto data = str(*o, "data");
    auto mime = str(*o, "mimeType");
    r.content.push_back(content_block(json::object{{"type", type}, {"data", data}, {"mimeType", mime}}));
    return "[" + type + " " + mime + ", " + std::to_string(data.size() * 3 / 4) + " bytes]";
  }
  if (type == "resource") {
    const json::object* res = nullptr;
    if (auto* v = o->if_contains("resource")) res = v->if_object();
    if (!res) return std::nullopt;
    return map_resource(*res, r.content);
  }
  if (type == "resource_link") return map_resource_link(*o, r.content);
  return json::serialize(item);
}

}  // namespace

ToolResult map_mcp_result(const json::object& result, std::size_t output_limit) {
  ToolResult r;
  std::string text;
  auto append = [&](const std::string& s) {
    if (!text.empty()) text += "\n";
    text += s;
  };
  bool any_text = false;
  if (auto* c = result.if_contains("content"); c && c->is_array())
    for (const auto& item : c->as_array())
      if (auto t = map_content_item(item, r, any_text)) append(*t);
  // Servers are asked to mirror structured content as text; it is the text when they did not.
  if (auto* sc = result.if_contains("structuredContent"); sc && !sc->is_null() && !any_text) {
    auto s = json::serialize(*sc);
    append(s);
    r.content.push_back(TextContent{s});
  }
  r.is_error = false;
  if (auto* e = result.if_contains("isError"); e && e->is_bool()) r.is_error = e->as_bool();
  if (text.empty()) text = r.is_error ? "The tool reported an error without details." : "(no output)";
  r.text = cut_for_model(std::move(text), output_limit);
  cut_for_editor(r.content, output_limit);
  // The whole CallToolResult: clients that take rawOutput as the result (the AI SDK provider,
  // agentgui) get everything the server answered.
  r.raw_output = result;
  return r;
}

}  // namespace runtime::tools
