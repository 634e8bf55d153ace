// mcp_servers/<id>.yaml and the `mcp_servers:` entries of OpenVaala plugin manifests.
#include <algorithm>

#include "runtime/engine/loaders.hpp"
#include "runtime/engine/names.hpp"
#include "support/text.hpp"

namespace runtime::engine {

std::string_view transport_name(McpServerConfig::Transport t) {
  switch (t) {
    case McpServerConfig::Transport::Stdio: return "stdio";
    case McpServerConfig::Transport::Http: return "http";
    case McpServerConfig::Transport::Sse: return "sse";
  }
  return "stdio";
}

namespace detail {

namespace {

using config::YamlReader;

std::optional<double> positive_seconds(YamlReader& r, const YAML::Node& map, const char* key, bool& ok) {
  auto n = map[key];
  if (!n || n.IsNull()) return std::nullopt;
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !(v > 0) || v > 1e9) {
    r.error(n, std::string("'") + key + "' must be a positive number of seconds");
    ok = false;
    return std::nullopt;
  }
  return v;
}

// `local`, or an executor in executors/ whose type is not `virtual`.
bool check_executor(YamlReader& r, const YAML::Node& at, const std::string& id, const fs::path& config_root) {
  if (id == "local") return true;
  if (id == "openvaala") {
    r.error(at, "the built-in 'openvaala' executor cannot run MCP servers (use local or an executor from executors/)");
    return false;
  }
  fs::path file = config_root / "executors" / (id + ".yaml");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    r.error(at, "executor '" + id + "' is not defined (no executors/" + id +
                    ".yaml); each entry must be local or an executor from executors/");
    return false;
  }
  try {
    auto node = YAML::LoadFile(file.string());
    if (node.IsMap() && node["type"] && node["type"].IsScalar() && node["type"].Scalar() == "virtual") {
      r.error(at, "executor '" + id + "' is virtual and cannot run MCP servers");
      return false;
    }
  } catch (const YAML::Exception&) {
    // The executor file's own problems are reported by whoever loads executors.
  }
  return true;
}

// `oauth: {client_id?, client_secret_env?, scopes?, callback_port?}`.
bool parse_oauth(YamlReader& r, const YAML::Node& node, McpServerConfig& c) {
  if (!node.IsMap()) {
    r.error(node, "'oauth' must be a mapping (client_id, client_secret_env, scopes, callback_port)");
    return false;
  }
  bool ok = true;
  static const std::vector<std::string> kOAuthKeys = {"client_id", "client_secret_env", "scopes", "callback_port"};
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>("");
    if (std::find(kOAuthKeys.begin(), kOAuthKeys.end(), key) == kOAuthKeys.end()) {
      r.error(kv.first, "unknown key '" + key + "' in 'oauth' (allowed: client_id, client_secret_env, scopes, callback_port)");
      ok = false;
    }
  }
  McpServerConfig::OAuth o;
  if (node["client_id"]) {
    auto id = r.string(node, "client_id");
    if (!id || id->empty()) {
      r.error(node["client_id"], "'client_id' must be a non-empty string");
      ok = false;
    } else {
      o.client_id = *id;
    }
  }
  if (node["client_secret_env"]) {
    auto env = r.string(node, "client_secret_env");
    if (!env || env->empty() || env->find_first_of("= ") != std::string::npos) {
      r.error(node["client_secret_env"], "'client_secret_env' must name an environment variable (never the secret itself)");
      ok = false;
    } else if (o.client_id.empty()) {
      r.error(node["client_secret_env"], "'client_secret_env' needs 'client_id' (a dynamically registered client gets its own secret)");
      ok = false;
    } else {
      o.client_secret_env = *env;
    }
  }
  if (node["scopes"]) {
    if (auto sc = r.string_list(node, "scopes")) o.scopes = *sc;
    else ok = false;
  }
  if (auto p = node["callback_port"]) {
    int port = 0;
    if (!p.IsScalar() || !YAML::convert<int>::decode(p, port) || port < 1 || port > 65535) {
      r.error(p, "'callback_port' must be a port number (1-65535)");
      ok = false;
    } else {
      o.callback_port = port;
    }
  }
  c.oauth = std::move(o);
  return ok;
}

// Every key is one of kKeys; `executors` is not allowed in a plugin's entries.
bool check_server_keys(YamlReader& r, const YAML::Node& node, bool in_plugin) {
  static const std::vector<std::string> kKeys = {"id", "type", "command", "args", "env", "url", "headers", "oauth", "executors",
                                                 "tools", "required", "disabled", "startup_timeout_seconds",
                                                 "tool_timeout_seconds"};
  const std::string what = in_plugin ? "an mcp_servers entry" : "an MCP server file";
  bool ok = true;
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>("");
    if (in_plugin && key == "executors") {
      r.error(kv.first,
              "'executors' is not allowed in a plugin's mcp_servers: plugin servers run only on local (to run it "
              "elsewhere, put a file with the same id in mcp_servers/)");
      ok = false;
    } else if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      std::string allowed;
      for (const auto& k : kKeys)
        if (!(in_plugin && k == "executors")) allowed += (allowed.empty() ? "" : ", ") + k;
      r.error(kv.first, "unknown key '" + key + "' in " + what + " (allowed: " + allowed + ")");
      ok = false;
    }
  }
  return ok;
}

// `id`: false when missing (the entry is dropped); a bad one, or one that does not match the file
// name, clears `ok`.
bool parse_server_id(YamlReader& r, const YAML::Node& node, const McpParseContext& ctx, McpServerConfig& c, bool& ok) {
  auto id = r.string(node, "id");
  if (!id || id->empty()) {
    r.error(node, std::string("'id' is required") +
                      (!ctx.plugin.empty() ? " (letters, digits, '-' and '_')" : " and must match the file name"));
    return false;
  }
  c.id = *id;
  if (!is_mcp_server_id(c.id)) {
    r.error(node["id"], "id '" + c.id + "' is invalid: use letters, digits, '-' and '_', without '__'");
    ok = false;
  } else if (!ctx.expected_id.empty() && c.id != ctx.expected_id) {
    r.error(node["id"], "id '" + c.id + "' does not match the file name '" + ctx.expected_id + ".yaml'");
    ok = false;
  }
  return true;
}

// `type`: stdio, http or sse (nullopt, reported, otherwise).
std::optional<std::string> parse_transport(YamlReader& r, const YAML::Node& node, McpServerConfig& c) {
  auto type = r.string(node, "type");
  if (!type || (*type != "stdio" && *type != "http" && *type != "sse")) {
    r.error(node["type"] ? node["type"] : node,
            std::string("'type' must be stdio, http or sse") + (type ? ", not '" + *type + "'" : " (it is missing)"));
    return std::nullopt;
  }
  c.transport = *type == "stdio" ? McpServerConfig::Transport::Stdio
                : *type == "http" ? McpServerConfig::Transport::Http
                                  : McpServerConfig::Transport::Sse;
  return type;
}

// command, args, env; in a plugin, ${OPENVAALA_PLUGIN_ROOT} is the plugin's folder.
void parse_stdio(YamlReader& r, const YAML::Node& node, const McpParseContext& ctx, McpServerConfig& c, bool& ok) {
  for (const char* k : {"url", "headers", "oauth"})
    if (node[k]) {
      r.error(node[k], std::string("'") + k + "' is not allowed for a stdio server (only for http and sse)");
      ok = false;
    }
  auto command = r.string(node, "command");
  if (!command || command->empty()) {
    r.error(node, "'command' is required for a stdio server");
    ok = false;
  } else {
    c.command = *command;
  }
  if (node["args"]) {
    if (auto args = r.string_list(node, "args")) c.args = *args;
    else ok = false;
  }
  if (auto env = r.string_map(node, "env", ok)) c.env = *env;
  if (ctx.plugin.empty()) return;
  const std::string root = ctx.plugin_root.string();
  c.command = support::replace_all(c.command, "${OPENVAALA_PLUGIN_ROOT}", root);
  for (auto& a : c.args) a = support::replace_all(a, "${OPENVAALA_PLUGIN_ROOT}", root);
  for (auto& [k, v] : c.env) v = support::replace_all(v, "${OPENVAALA_PLUGIN_ROOT}", root);
  c.env["OPENVAALA_PLUGIN_ROOT"] = root;
}

// url, headers, oauth of an http or sse server.
void parse_remote(YamlReader& r, const YAML::Node& node, const std::string& type, McpServerConfig& c, bool& ok) {
  for (const char* k : {"command", "args", "env"})
    if (node[k]) {
      r.error(node[k], std::string("'") + k + "' is not allowed for an " + type + " server (only for stdio)");
      ok = false;
    }
  auto url = r.string(node, "url");
  if (!url || url->empty()) {
    r.error(node, "'url' is required for an " + type + " server");
    ok = false;
  } else if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0) {
    r.error(node["url"], "'url' must be an http:// or https:// address, not '" + *url + "'");
    ok = false;
  } else {
    c.url = *url;
  }
  if (auto h = r.string_map(node, "headers", ok)) c.headers = *h;
  if (node["oauth"]) ok = parse_oauth(r, node["oauth"], c) && ok;
}

// `executors:` of an MCP server file: at least one, each local or a non-virtual executor.
void parse_server_executors(YamlReader& r, const YAML::Node& node, const McpParseContext& ctx, McpServerConfig& c,
                            bool& ok) {
  auto ex = r.string_list(node, "executors");
  if (!ex) {
    ok = false;
    return;
  }
  if (ex->empty()) {
    r.error(node["executors"], "'executors' must list at least one executor (the default is [local])");
    ok = false;
  }
  std::size_t i = 0;
  for (const auto& e : *ex) ok = check_executor(r, node["executors"][i++], e, ctx.config_root) && ok;
  c.executors = *ex;
}

// tools, required, disabled and the two timeouts.
void parse_server_options(YamlReader& r, const YAML::Node& node, McpServerConfig& c, bool& ok) {
  if (node["tools"]) {
    if (auto t = r.string_list(node, "tools")) c.tools = *t;
    else ok = false;
  }
  for (auto [key, field] : {std::pair{"required", &c.required}, std::pair{"disabled", &c.disabled}}) {
    if (!node[key]) continue;
    if (auto b = r.boolean(node, key)) *field = *b;
    else if (!node[key].IsNull()) ok = false;
  }
  if (auto v = positive_seconds(r, node, "startup_timeout_seconds", ok)) c.startup_timeout_seconds = *v;
  if (auto v = positive_seconds(r, node, "tool_timeout_seconds", ok)) c.tool_timeout_seconds = *v;
}

}  // namespace

std::optional<McpServerConfig> parse_mcp_server(YamlReader& r, const YAML::Node& node, const McpParseContext& ctx) {
  const bool in_plugin = !ctx.plugin.empty();
  if (!r.expect_map(node, in_plugin ? "every entry of 'mcp_servers'" : "an MCP server file")) return std::nullopt;
  McpServerConfig c;
  c.source_file = r.file();
  c.source_line = YamlReader::line_of(node);
  c.plugin = ctx.plugin;
  bool ok = check_server_keys(r, node, in_plugin);
  if (!parse_server_id(r, node, ctx, c, ok)) return std::nullopt;
  const auto type = parse_transport(r, node, c);
  if (!type) return std::nullopt;
  if (c.transport == McpServerConfig::Transport::Stdio) parse_stdio(r, node, ctx, c, ok);
  else parse_remote(r, node, *type, c, ok);
  if (!in_plugin && node["executors"]) parse_server_executors(r, node, ctx, c, ok);
  parse_server_options(r, node, c, ok);
  if (!ok) return std::nullopt;
  return c;
}

std::vector<McpServerConfig> load_mcp_server_files(const fs::path& config_root, Diagnostics& diags) {
  std::vector<McpServerConfig> out;
  fs::path dir = config_root / "mcp_servers";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& p = it->path();
    if (p.extension() == ".yaml" && p.filename().string()[0] != '.') files.push_back(p);
    else if (p.extension() == ".yml")
      diags.push_back({Diagnostic::Severity::Warning, p.string(), 0,
                       "ignored: MCP server files must be named <id>.yaml"});
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    config::YamlReader r(f, diags);
    auto root = r.load();
    if (!root) continue;
    if (root->IsNull()) {
      r.error_line(0, "the file is empty: an MCP server needs at least 'id' and 'type'");
      continue;
    }
    McpParseContext ctx;
    ctx.config_root = config_root;
    ctx.expected_id = f.stem().string();
    if (auto c = parse_mcp_server(r, *root, ctx)) out.push_back(std::move(*c));
  }
  return out;
}

}  // namespace detail
}  // namespace runtime::engine
