// Results every tool shares: errors, refusals, paths.
#include "runtime/tools/tool.hpp"
#include "runtime/tools/tool_paths.hpp"

#include "runtime/agent/containment.hpp"
#include "support/run_blocking.hpp"

namespace runtime::tools {

std::filesystem::path resolve_path(const ToolEnv& env, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = env.cwd / p;
  return p.lexically_normal();
}

boost::asio::awaitable<std::optional<std::filesystem::path>> path_to_open(ToolContext& ctx, const std::string& path,
                                                                     bool through_editor) {
  auto lexical = resolve_path(ctx.env(), path);
  if (!ctx.env().on_local()) co_return lexical;  // resolved there, by the executor's own open
  if (through_editor && containment::names_process_file(lexical)) co_return std::nullopt;
  auto job = [lexical] { return containment::resolve(lexical); };
  auto resolving = support::run_blocking(ctx.blocking_pool(), std::move(job));  // apart from co_await: GCC 12
  auto real = co_await std::move(resolving);
  if (through_editor && containment::names_process_file(real)) co_return std::nullopt;
  co_return real;
}

std::string executor_of(const boost::json::object& args, const ToolEnv& env) {
  if (auto* v = args.if_contains("executor"); v && v->is_string() && !v->as_string().empty())
    return std::string(v->as_string());
  return env.executor;
}

boost::json::object executor_property() {
  return boost::json::object{{"type", "string"},
                             {"description", "Executor id to run on (see the system prompt); default: the session's"}};
}

std::string on_executor_suffix(const boost::json::object& args, const ToolEnv& env) {
  auto id = executor_of(args, env);
  return id == "local" ? std::string() : " on " + id;
}

ToolResult error_result(std::string message) {
  ToolResult r;
  r.is_error = true;
  r.content.push_back(TextContent{message});
  r.text = std::move(message);
  return r;
}

ToolResult refused_result(Mode mode) {
  if (mode == Mode::ReadOnly)
    return error_result(
        "Refused: this session is in read-only mode, so files cannot be edited and commands cannot be run. "
        "Tell the user what you would change, or ask them to switch to another mode.");
  return error_result("The user rejected this tool call. Do not retry it; ask the user how to proceed instead.");
}

ToolResult forbidden_result() {
  return error_result(
      "Refused: no tool may read or write openvaala's credentials file, its MCP token file (mcp_tokens.json) or "
      "a process's environment (/proc/*/environ): they hold the user's keys, in any mode. Do not retry, and do "
      "not try to reach them another way.");
}

ToolResult process_file_result(const std::string& path) {
  return error_result("Refused: " + path +
                      " names a file of whichever process opens it (/proc, /dev/fd, /dev/std*), and the editor "
                      "opens files for this session in its own process, so it would get another file than the one "
                      "checked. Use the file's own path.");
}

}  // namespace runtime::tools
