#include "runtime/mcp/server_specs.hpp"

namespace runtime::mcp {

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
      bridge::mcp::HttpSpec t{c.url, {}};
      for (const auto& [k, v] : c.headers) t.headers.emplace_back(k, v);
      spec.transport = std::move(t);
      break;
    }
    case engine::McpServerConfig::Transport::Sse: {
      bridge::mcp::SseSpec t{c.url, {}};
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
