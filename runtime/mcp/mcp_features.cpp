// The session's MCP servers beyond their tools: prompts as slash commands (/mcp__<id>__<prompt>
// fills the prompt's arguments in order; its messages become the user's turn), resources for
// the model (list_mcp_resources, read_mcp_resource) and resources the editor links in a prompt.
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "bridge/mcp/naming.hpp"
#include "runtime/mcp/mcp_manager_impl.hpp"
#include "runtime/tools/mcp_resource_tools.hpp"
#include "support/json_read.hpp"
#include "support/text.hpp"

namespace runtime::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using bridge::mcp::McpError;
using support::str_at;

namespace {

struct PromptArg {
  std::string name;
  bool required = false;
};

struct FoundPrompt {
  std::shared_ptr<McpServer> server;
  std::string server_id;
  std::string prompt;  // its name on the server
  std::string command;
  std::string description;
  std::vector<PromptArg> args;
};

std::vector<FoundPrompt> ready_prompts(const McpManager::Impl& impl) {
  std::vector<FoundPrompt> out;
  for (const auto& e : impl.entries_) {
    if (e.server->state() != ServerState::Ready) continue;
    for (const auto& p : e.server->prompts()) {
      const json::object* o = p.if_object();
      if (!o || str_at(*o, "name").empty()) continue;
      FoundPrompt f{e.server, e.spec.id, std::string(str_at(*o, "name")), {}, {}, {}};
      f.command = bridge::mcp::qualified_tool_name(e.spec.id, f.prompt);
      f.description = std::string(str_at(*o, "description"));
      if (f.description.empty()) f.description = std::string(str_at(*o, "title"));
      if (f.description.empty()) f.description = "MCP prompt '" + f.prompt + "'";
      f.description += " (" + e.spec.id + " MCP)";
      if (auto* args = support::arr_at(*o, "arguments"))
        for (const auto& a : *args)
          if (auto* ao = a.if_object(); ao && !str_at(*ao, "name").empty())
            f.args.push_back({std::string(str_at(*ao, "name")), support::bool_at(*ao, "required")});
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::string usage_hint(const std::vector<PromptArg>& args) {
  std::string hint;
  for (const auto& a : args) {
    if (!hint.empty()) hint += ' ';
    hint += a.required ? "<" + a.name + ">" : "[" + a.name + "]";
  }
  return hint;
}

// The words after the command, one per argument in order; the last argument takes the rest.
json::object fill_arguments(const std::vector<PromptArg>& args, std::string rest) {
  json::object out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    rest = support::trim(rest);
    if (rest.empty()) break;
    if (i + 1 == args.size()) {
      out[args[i].name] = rest;
      break;
    }
    auto end = rest.find_first_of(" \t\r\n");
    out[args[i].name] = rest.substr(0, end);
    rest = end == std::string::npos ? std::string() : rest.substr(end);
  }
  return out;
}

// One prompt message's content as the user's turn carries it.
void append_content(McpManager::PromptExpansion& x, const json::object& content) {
  auto append = [&](const std::string& s) {
    if (!x.text.empty()) x.text += "\n\n";
    x.text += s;
  };
  auto type = str_at(content, "type");
  if (type == "text") {
    append(std::string(str_at(content, "text")));
  } else if (type == "image") {
    x.images.emplace_back(std::string(str_at(content, "mimeType")), std::string(str_at(content, "data")));
  } else if (type == "resource") {
    if (auto* res = support::obj_at(content, "resource")) {
      std::string uri(str_at(*res, "uri"));
      if (res->contains("text"))
        append("<context ref=\"" + uri + "\">\n" + std::string(str_at(*res, "text")) + "\n</context>");
      else
        append("[@" + uri + "](" + uri + ") (binary content not shown)");
    }
  } else if (type == "resource_link") {
    append("[@" + std::string(str_at(content, "name")) + "](" + std::string(str_at(content, "uri")) + ")");
  } else if (type == "audio") {
    append("(an audio clip was attached; this agent cannot hear audio)");
  }
}

// A resources/read result as context for the model.
std::string contents_as_context(const std::string& server_id, const json::object& result) {
  std::string out;
  if (auto* contents = support::arr_at(result, "contents"))
    for (const auto& c : *contents) {
      const json::object* o = c.if_object();
      if (!o) continue;
      std::string uri(str_at(*o, "uri"));
      if (!out.empty()) out += "\n";
      if (o->contains("text"))
        out += "<context ref=\"" + uri + "\" server=\"" + server_id + "\">\n" + std::string(str_at(*o, "text")) +
               "\n</context>";
      else
        out += "[@" + uri + "](" + uri + ") (binary content from MCP server " + server_id + " not shown)";
    }
  return out;
}

std::shared_ptr<McpServer> server_named(const McpManager::Impl& impl, const std::string& id) {
  for (const auto& e : impl.entries_)
    if (e.spec.id == id) return e.server;
  throw tools::ResourceError("unknown MCP server '" + id + "'");
}

json::array with_server(const std::string& id, const json::value& resources) {
  json::array out;
  if (auto* list = resources.if_array())
    for (const auto& r : *list)
      if (auto* o = r.if_object()) {
        json::object item{{"server", id}};
        for (const auto& [k, v] : *o) item[k] = v;
        out.push_back(std::move(item));
      }
  return out;
}

// Servers still starting in the background are waited for (none is started or restarted here).
asio::awaitable<void> wait_for_starting(const McpManager::Impl& impl, support::CancelSource* cancel) {
  auto entries = impl.entries_;
  for (auto& e : entries)
    if (e.server->state() == ServerState::Starting) co_await e.server->ensure(cancel, false);
}

}  // namespace

std::vector<McpManager::PromptCommand> McpManager::prompt_commands() const {
  std::vector<PromptCommand> out;
  for (auto& f : ready_prompts(*impl_)) out.push_back({f.command, f.description, usage_hint(f.args)});
  return out;
}

asio::awaitable<std::optional<McpManager::PromptExpansion>> McpManager::expand_prompt_command(
    std::string text, support::CancelSource* cancel) {
  auto impl = impl_;
  std::string typed = support::trim(text);
  if (typed.rfind("/mcp__", 0) != 0) co_return std::nullopt;
  auto end = typed.find_first_of(" \t\r\n");
  std::string command = typed.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  std::string rest = end == std::string::npos ? std::string() : typed.substr(end);
  co_await wait_for_starting(*impl, cancel);  // a server still starting may have the prompt
  auto prompts = ready_prompts(*impl);
  auto it = std::find_if(prompts.begin(), prompts.end(), [&](const FoundPrompt& f) { return f.command == command; });
  if (it == prompts.end()) co_return std::nullopt;
  PromptExpansion x;
  auto args = fill_arguments(it->args, rest);
  for (const auto& a : it->args)
    if (a.required && !args.contains(a.name)) {
      x.text = "The prompt /" + command + " needs its argument '" + a.name + "': /" + command + " " + usage_hint(it->args);
      co_return x;
    }
  json::object result;
  try {
    result = co_await it->server->get_prompt(it->prompt, std::move(args), cancel);
  } catch (const std::exception& e) {
    x.text = "The MCP server '" + it->server_id + "' could not give the prompt '" + it->prompt + "': " + e.what();
    co_return x;
  }
  if (auto* messages = support::arr_at(result, "messages"))
    for (const auto& m : *messages)
      if (auto* mo = m.if_object())
        if (auto* content = support::obj_at(*mo, "content")) append_content(x, *content);
  x.ok = true;
  co_return x;
}

asio::awaitable<std::optional<std::string>> McpManager::read_listed_resource(std::string uri,
                                                                           support::CancelSource* cancel) {
  auto impl = impl_;
  co_await wait_for_starting(*impl, cancel);
  auto entries = impl->entries_;
  for (auto& e : entries) {
    if (e.server->state() != ServerState::Ready || !e.server->has_resources()) continue;
    bool listed = false;
    try {
      listed = co_await e.server->lists_resource(uri, cancel);
    } catch (const std::exception& ex) {
      spdlog::warn("mcp {}: resources/list failed: {}", e.spec.id, ex.what());
    }
    if (!listed) continue;
    auto result = co_await e.server->read_resource(uri, cancel);
    co_return contents_as_context(e.spec.id, result);
  }
  co_return std::nullopt;
}

std::vector<std::unique_ptr<tools::Tool>> resource_tools(const std::shared_ptr<McpManager::Impl>& impl) {
  std::weak_ptr<McpManager::Impl> weak = impl;
  tools::ListResourcesFn list = [weak](std::optional<std::string> server, std::optional<std::string> cursor,
                                       support::CancelSource* cancel) -> asio::awaitable<json::object> {
    auto me = weak.lock();
    if (!me || me->closed_) throw tools::ResourceError("the session's MCP servers were closed");
    if (server) {
      auto s = server_named(*me, *server);
      json::object page;
      try {
        page = co_await s->list_resources(cursor, cancel);
      } catch (const std::exception& e) {
        throw tools::ResourceError(std::string("resources/list failed: ") + e.what());
      }
      json::object payload{{"server", *server}, {"resources", with_server(*server, page["resources"])}};
      if (auto next = str_at(page, "nextCursor"); !next.empty()) payload["nextCursor"] = next;
      co_return payload;
    }
    json::array all;
    auto entries = me->entries_;
    for (auto& e : entries) {
      if (e.server->state() != ServerState::Ready || !e.server->has_resources()) continue;
      std::optional<std::string> next;
      try {
        for (int page = 0; page < 100; ++page) {
          auto result = co_await e.server->list_resources(next, cancel);
          for (auto& r : with_server(e.spec.id, result["resources"])) all.push_back(std::move(r));
          auto n = str_at(result, "nextCursor");
          if (n.empty() || (next && *next == n)) break;
          next = std::string(n);
        }
      } catch (const std::exception& ex) {
        spdlog::warn("mcp {}: resources/list failed: {}", e.spec.id, ex.what());
      }
    }
    co_return json::object{{"resources", std::move(all)}};
  };
  tools::ReadResourceFn read = [weak](std::string server, std::string uri,
                                      support::CancelSource* cancel) -> asio::awaitable<json::object> {
    auto me = weak.lock();
    if (!me || me->closed_) throw tools::ResourceError("the session's MCP servers were closed");
    auto s = server_named(*me, server);
    json::object result;
    try {
      result = co_await s->read_resource(uri, cancel);
    } catch (const std::exception& e) {
      throw tools::ResourceError(std::string("resources/read failed: ") + e.what());
    }
    json::object payload{{"server", server}, {"uri", uri}};
    for (const auto& [k, v] : result) payload[k] = v;
    co_return payload;
  };
  std::vector<std::unique_ptr<tools::Tool>> out;
  out.push_back(tools::make_list_mcp_resources_tool(std::move(list)));
  out.push_back(tools::make_read_mcp_resource_tool(std::move(read)));
  return out;
}

}  // namespace runtime::mcp
