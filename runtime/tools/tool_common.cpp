#include "runtime/tools/tool.hpp"

namespace runtime::tools {

std::filesystem::path resolve_path(const Session& session, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = session.cwd / p;
  return p.lexically_normal();
}

boost::json::object text_content(std::string text) {
  return boost::json::object{{"type", "content"},
                             {"content", boost::json::object{{"type", "text"}, {"text", std::move(text)}}}};
}

ToolResult error_result(std::string message) {
  ToolResult r;
  r.is_error = true;
  r.content.push_back(text_content(message));
  r.text = std::move(message);
  return r;
}

ToolResult refused_result(Authorization a, const Session& session) {
  if (session.mode == Mode::ReadOnly)
    return error_result(
        "Refused: this session is in read-only mode, so files cannot be edited and commands cannot be run. "
        "Tell the user what you would change, or ask them to switch to another mode.");
  (void)a;
  return error_result("The user rejected this tool call. Do not retry it; ask the user how to proceed instead.");
}

}  // namespace runtime::tools
