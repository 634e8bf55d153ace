// The shell text the remote executors write and read (executors.hpp, remote_shell_executor.hpp):
// quoting, exports, and the answers their scripts print.
#include "runtime/executors/executors.hpp"
#include "runtime/executors/remote_shell_executor.hpp"

namespace runtime::executors {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') out += "'\\''";
    else out += ch;
  }
  return out + "'";
}

std::string env_exports(const EnvList& env) {
  std::string s;
  for (const auto& [k, v] : env) s += "export " + k + "=" + shell_quote(v) + "\n";
  return s;
}

std::string last_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  auto nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

std::optional<InstallResult> parse_install_answer(const std::string& stdout_text) {
  const std::string line = last_line(stdout_text);
  using Answer = std::pair<std::string_view, bool>;  // prefix, written
  for (const auto& [prefix, written] : {Answer{"OVSAME ", false}, Answer{"OVNEW ", true}})
    if (line.starts_with(prefix) && line.size() > prefix.size()) return InstallResult{line.substr(prefix.size()), written};
  return std::nullopt;
}

}  // namespace runtime::executors
