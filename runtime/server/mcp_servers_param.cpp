#include "runtime/server/mcp_servers_param.hpp"

#include <boost/url/parse.hpp>

#include <set>

#include "acp/rpc_error.hpp"
#include "bridge/mcp/naming.hpp"

namespace runtime::server {

using namespace bridge::mcp;

namespace json = boost::json;

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw acp::RpcError(acp::error_code::kInvalidParams, "Invalid params: " + path + " " + what);
}

std::string required_string(const json::object& o, const std::string& path, const char* key) {
  auto* v = o.if_contains(key);
  if (!v) fail(path + "." + key, "is required");
  if (!v->is_string()) fail(path + "." + key, "must be a string");
  return std::string(v->as_string());
}

// [{name, value}] (the ACP shape); a plain object is accepted too.
std::vector<std::pair<std::string, std::string>> name_values(const json::object& o, const std::string& path,
                                                             const char* key) {
  std::vector<std::pair<std::string, std::string>> out;
  auto* v = o.if_contains(key);
  if (!v || v->is_null()) return out;
  if (v->is_object()) {
    for (const auto& [k, val] : v->as_object()) {
      if (!val.is_string()) fail(path + "." + key + "." + std::string(k), "must be a string");
      out.emplace_back(std::string(k), std::string(val.as_string()));
    }
    return out;
  }
  if (!v->is_array()) fail(path + "." + key, "must be an array of {name, value}");
  const auto& arr = v->as_array();
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string p = path + "." + key + "[" + std::to_string(i) + "]";
    if (!arr[i].is_object()) fail(p, "must be an object {name, value}");
    const auto& e = arr[i].as_object();
    out.emplace_back(required_string(e, p, "name"), required_string(e, p, "value"));
  }
  return out;
}

std::string http_url(const json::object& o, const std::string& path) {
  auto url = required_string(o, path, "url");
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed || (parsed->scheme() != "http" && parsed->scheme() != "https") || parsed->host().empty())
    fail(path + ".url", "must be an http(s) URL, got '" + url + "'");
  return url;
}

}  // namespace

std::vector<ServerSpec> parse_acp_mcp_servers(const json::value& value, const AcpServerOptions& options) {
  std::vector<ServerSpec> out;
  if (value.is_null()) return out;
  if (!value.is_array()) fail("mcpServers", "must be an array");
  std::set<std::string> ids;
  const auto& arr = value.as_array();
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string path = "mcpServers[" + std::to_string(i) + "]";
    if (!arr[i].is_object()) fail(path, "must be an object");
    const auto& o = arr[i].as_object();
    ServerSpec spec;
    std::string name = required_string(o, path, "name");
    if (name.empty()) fail(path + ".name", "must not be empty");
    spec.id = sanitize_name(name);
    if (!ids.insert(spec.id).second) fail(path + ".name", "'" + name + "' is used by another MCP server of this session");
    spec.startup_timeout = options.startup_timeout;
    spec.tool_timeout = options.tool_timeout;
    spec.origin = "session/new " + path;
    std::string type = "stdio";
    if (auto* t = o.if_contains("type"); t && !t->is_null()) {
      if (!t->is_string()) fail(path + ".type", "must be a string");
      type = std::string(t->as_string());
    }
    if (type == "stdio") {
      StdioSpec s;
      s.command = required_string(o, path, "command");
      if (s.command.empty()) fail(path + ".command", "must not be empty");
      if (auto* a = o.if_contains("args"); a && !a->is_null()) {
        if (!a->is_array()) fail(path + ".args", "must be an array of strings");
        const auto& args = a->as_array();
        for (std::size_t k = 0; k < args.size(); ++k) {
          if (!args[k].is_string()) fail(path + ".args[" + std::to_string(k) + "]", "must be a string");
          s.args.emplace_back(args[k].as_string());
        }
      }
      s.env = name_values(o, path, "env");
      s.cwd = options.cwd;
      spec.transport = std::move(s);
    } else if (type == "http") {
      if (!options.allow_http) fail(path + ".type", "'http' is not supported by this agent");
      auto url = http_url(o, path);
      auto headers = name_values(o, path, "headers");
      spec.transport = HttpSpec{std::move(url), std::move(headers), nullptr};
    } else if (type == "sse") {
      if (!options.allow_sse) fail(path + ".type", "'sse' is not supported by this agent");
      auto url = http_url(o, path);
      auto headers = name_values(o, path, "headers");
      spec.transport = SseSpec{std::move(url), std::move(headers), nullptr};
    } else if (type == "acp") {
      if (!options.allow_acp) fail(path + ".type", "'acp' is not supported by this agent");
      auto sid = required_string(o, path, "serverId");
      if (sid.empty()) fail(path + ".serverId", "must not be empty");
      spec.transport = AcpSpec{sid};
    } else {
      fail(path + ".type", "must be one of stdio, http, sse, acp; got '" + type + "'");
    }
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace runtime::server
