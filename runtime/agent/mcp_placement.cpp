#include "runtime/agent/mcp_placement.hpp"

#include <algorithm>

namespace runtime {

std::string mcp_executor(const engine::McpServerConfig& c, const std::string& session_executor) {
  if (c.executors.empty()) return config::kLocalExecutor;
  if (std::find(c.executors.begin(), c.executors.end(), session_executor) != c.executors.end()) return session_executor;
  return c.executors.front();
}

boost::asio::awaitable<std::map<std::string, std::string>> connect_mcp_executors(const Session& s) {
  std::map<std::string, std::string> failed;
  if (!s.executors) co_return failed;
  for (const auto& c : s.view.mcp_servers) {
    const std::string id = mcp_executor(c, s.executor);
    if (id == config::kLocalExecutor || failed.count(id)) continue;
    auto ex = s.executors->find(id, s.cwd);
    if (!ex || !ex->info().can_run) continue;  // place_mcp_server says why
    try {
      co_await ex->working_directory(nullptr);
    } catch (const ExecutorError& e) {
      failed[id] = e.what();
    }
  }
  co_return failed;
}

bridge::mcp::ServerSpec place_mcp_server(bridge::mcp::ServerSpec spec, const engine::McpServerConfig& c,
                                         const Session& s) {
  const std::string id = mcp_executor(c, s.executor);
  spec.executor = id;
  if (id == config::kLocalExecutor) return spec;
  auto ex = s.executors ? s.executors->find(id, s.cwd) : nullptr;
  if (!ex) throw ExecutorError("there is no executor '" + id + "'");
  if (!ex->info().can_run)
    throw ExecutorError("executor '" + id + "' cannot run MCP servers: it has files only (" + ex->info().type + ")");
  auto* stdio = std::get_if<bridge::mcp::StdioSpec>(&spec.transport);
  if (!stdio)
    throw ExecutorError("executor '" + id + "': " + std::string(bridge::mcp::transport_name(spec.transport)) +
                        " servers are connected from local only for now; list local in its executors");
  std::string line = c.cwd ? "cd -- " + executors::shell_quote(c.cwd->string()) + " && exec " : "exec ";
  line += executors::shell_quote(stdio->command);
  for (const auto& a : stdio->args) line += " " + executors::shell_quote(a);
  auto argv = ex->launch_argv(line, stdio->env);
  bridge::mcp::StdioSpec through_ssh{argv.front(), std::vector<std::string>(argv.begin() + 1, argv.end()), {}, ""};
  spec.transport = std::move(through_ssh);
  return spec;
}

}  // namespace runtime
