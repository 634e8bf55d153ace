#include "runtime/agent/remote/mcp_placement.hpp"

#include <algorithm>
#include <optional>
#include <boost/url/parse.hpp>

namespace runtime {

std::string mcp_executor(const engine::McpServerConfig& c, const std::string& session_executor) {
  if (c.executors.empty()) return config::kLocalExecutor;
  if (std::find(c.executors.begin(), c.executors.end(), session_executor) != c.executors.end()) return session_executor;
  return c.executors.front();
}

namespace {
// The host and port an http/sse server's URL names (its default port by scheme).
std::optional<std::pair<std::string, std::string>> url_authority(const std::string& url) {
  auto u = boost::urls::parse_uri(url);
  if (!u) return std::nullopt;
  std::string port = u->has_port() ? std::string(u->port()) : (u->scheme() == "https" ? "443" : "80");
  return std::make_pair(std::string(u->host_name().empty() ? u->host_address() : u->host_name()), port);
}
}  // namespace

boost::asio::awaitable<McpExecutorLinks> connect_mcp_executors(const Session& s) {
  McpExecutorLinks links;
  if (!s.services.executors) co_return links;
  for (const auto& c : s.services.view.mcp_servers) {
    const std::string id = mcp_executor(c, s.settings.executor);
    if (id == config::kLocalExecutor || links.unreachable.count(id)) continue;
    auto ex = use_executor(s, id);
    if (!ex || !ex->info().can_run) continue;  // place_mcp_server says why
    try {
      co_await ex->working_directory(nullptr);
    } catch (const ExecutorError& e) {
      links.unreachable[id] = e.what();
      continue;
    }
    if (c.transport == engine::McpServerConfig::Transport::Stdio) continue;
    auto authority = url_authority(c.url);
    if (!authority) continue;  // the transport reports the bad URL
    try {
      links.forwards[c.id] = co_await ex->forward_tcp(authority->first, authority->second, nullptr);
    } catch (const ExecutorError& e) {
      links.forward_errors[c.id] = e.what();
    }
  }
  co_return links;
}

bridge::mcp::ServerSpec place_mcp_server(bridge::mcp::ServerSpec spec, const engine::McpServerConfig& c,
                                         const Session& s, const McpExecutorLinks& links) {
  const std::string id = mcp_executor(c, s.settings.executor);
  spec.executor = id;
  if (id == config::kLocalExecutor) return spec;
  auto ex = use_executor(s, id);
  if (!ex) throw ExecutorError("there is no executor '" + id + "'");
  if (!ex->info().can_run)
    throw ExecutorError("executor '" + id + "' cannot run MCP servers: it has files only (" + ex->info().type + ")");
  auto* stdio = std::get_if<bridge::mcp::StdioSpec>(&spec.transport);
  if (!stdio) {
    auto forwarded = links.forwards.find(c.id);
    if (forwarded == links.forwards.end()) {
      auto why = links.forward_errors.find(c.id);
      throw ExecutorError(why != links.forward_errors.end() ? why->second
                                                            : "executor '" + id + "': no connection to forward " + c.url + " through");
    }
    std::visit([&](auto& t) {
      if constexpr (requires { t.connect_to; }) t.connect_to = forwarded->second;
    }, spec.transport);
    return spec;
  }
  std::string line = c.cwd ? "cd -- " + executors::shell_quote(c.cwd->string()) + " && exec " : "exec ";
  line += executors::shell_quote(stdio->command);
  for (const auto& a : stdio->args) line += " " + executors::shell_quote(a);
  auto argv = ex->launch_argv(line, stdio->env);
  bridge::mcp::StdioSpec through_ssh{argv.front(), std::vector<std::string>(argv.begin() + 1, argv.end()), {}, ""};
  spec.transport = std::move(through_ssh);
  return spec;
}

}  // namespace runtime
