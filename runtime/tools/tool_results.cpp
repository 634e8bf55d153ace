// Results every tool shares: errors, refusals, paths.
#include "runtime/tools/tool.hpp"

namespace runtime::tools {

std::filesystem::path resolve_path(const ToolEnv& env, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = env.cwd / p;
  return p.lexically_normal();
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
      "Refused: no tool may read or write openvaala's credentials file (it holds the user's API keys), "
      "in any mode. Do not retry, and do not try to reach it another way.");
}

}  // namespace runtime::tools
