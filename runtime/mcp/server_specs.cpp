#include "runtime/mcp/server_specs.hpp"

#include <strings.h>

#include <cstdlib>
#include <map>

#include "runtime/config/paths.hpp"

namespace runtime::mcp {

std::shared_ptr<bridge::mcp::oauth::Authorizer> authorizer_for(const engine::McpServerConfig& c) {
  namespace oauth = bridge::mcp::oauth;
  std::optional<oauth::ClientConfig> client;
  if (c.oauth) {
    client.emplace();
    client->client_id = c.oauth->client_id;
    if (!c.oauth->client_secret_env.empty())
      if (const char* v = std::getenv(c.oauth->client_secret_env.c_str())) client->client_secret = v;
    client->scopes = c.oauth->scopes;
    client->callback_port = c.oauth->callback_port;
  }
  const auto file = oauth::token_file(config::config_root());
  // One per server and URL in this process (the io thread is the only user).
  static std::map<std::string, std::weak_ptr<oauth::Authorizer>> live;
  const std::string key = file.string() + "\n" + c.id + "\n" + c.url;
  if (auto a = live[key].lock()) return a;
  auto a = std::make_shared<oauth::Authorizer>(c.id, c.url, oauth::TokenStore(file), std::move(client));
  live[key] = a;
  return a;
}

void add_oauth_to_editor_server(bridge::mcp::ServerSpec& spec) {
  auto add = [&spec](auto& t) {
    if (t.auth) return;
    for (const auto& [name, value] : t.headers)
      if (strcasecmp(name.c_str(), "authorization") == 0) return;  // the editor signs in itself
    engine::McpServerConfig c;
    c.id = spec.id;
    c.url = t.url;
    t.auth = authorizer_for(c);
  };
  if (auto* h = std::get_if<bridge::mcp::HttpSpec>(&spec.transport)) add(*h);
  if (auto* s = std::get_if<bridge::mcp::SseSpec>(&spec.transport)) add(*s);
}

bridge::mcp::ServerSpec spec_from_config(const engine::McpServerConfig& c, const std::filesystem::path& session_cwd) {
  bridge::mcp::ServerSpec spec;
  spec.id = c.id;
  switch (c.transport) {
    case engine::McpServerConfig::Transport::Stdio: {
      bridge::mcp::StdioSpec t{c.command, c.args, {}, c.cwd ? c.cwd->string() : session_cwd.string()};
      for (const auto& [k, v] : c.env) t.env.emplace_back(k, v);
      spec.transport = std::move(t);
      break;
    }
    case engine::McpServerConfig::Transport::Http: {
      bridge::mcp::HttpSpec t{c.url, {}, authorizer_for(c)};
      for (const auto& [k, v] : c.headers) t.headers.emplace_back(k, v);
      spec.transport = std::move(t);
      break;
    }
    case engine::McpServerConfig::Transport::Sse: {
      bridge::mcp::SseSpec t{c.url, {}, authorizer_for(c)};
      for (const auto& [k, v] : c.headers) t.headers.emplace_back(k, v);
      spec.transport = std::move(t);
      break;
    }
  }
  spec.startup_timeout = std::chrono::milliseconds(static_cast<long>(c.startup_timeout_seconds * 1000));
  spec.tool_timeout = std::chrono::milliseconds(static_cast<long>(c.tool_timeout_seconds * 1000));
  spec.tools = c.tools;
  spec.required = c.required;
  spec.origin = c.plugin.empty() ? c.source_file.string() : "plugin " + c.plugin;
  return spec;
}

}  // namespace runtime::mcp
