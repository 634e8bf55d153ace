#include "runtime/agent/permissions_command.hpp"

#include "runtime/agent/journal.hpp"
#include "support/text.hpp"

namespace runtime {

namespace {
constexpr std::string_view kCommand = "/permissions";

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
}  // namespace

std::optional<std::string> permissions_command(const Session& session, const std::string& text) {
  const std::string typed = support::trim(text);
  if (!starts_with(typed, kCommand) || session.services.view.find_skill("permissions")) return std::nullopt;
  const std::string_view rest = std::string_view(typed).substr(kCommand.size());
  if (!rest.empty() && rest.front() != ' ' && rest.front() != '\t' && rest.front() != '\n') return std::nullopt;
  return std::string(support::trim(rest));
}

std::string describe_approval_key(const std::string& key) {
  const auto colon = key.find(':');
  if (colon == std::string::npos) return key;
  const std::string kind = key.substr(0, colon), what = key.substr(colon + 1);
  if (kind == "bash") return "`" + what + "` (commands)";
  if (kind == "edit") return "edits in " + what;
  if (kind == "read") return "reads in " + what;
  if (kind == "mcp") {
    const auto slash = what.find('/');
    if (slash != std::string::npos) return "MCP tool `" + what.substr(slash + 1) + "` of server `" + what.substr(0, slash) + "`";
  }
  return key;
}

void run_permissions_command(Session& session, const std::string& argument) {
  if (argument == "clear") {
    const auto forgotten = session.remembered_permissions.size();
    forget_answers(session);
    notify(session, {NoticeSeverity::Info, "Remembered answers forgotten",
                     std::to_string(forgotten) + " answer" + (forgotten == 1 ? "" : "s") +
                         " forgotten: every command, edit and tool asks again as the mode says."});
    return;
  }
  if (!argument.empty()) {
    notify(session, {NoticeSeverity::Warning, "Unknown /permissions argument",
                     "`/permissions` lists the answers remembered for this session; `/permissions clear` forgets them."});
    return;
  }
  std::string allowed, rejected;
  for (const auto& [key, allow] : session.remembered_permissions)
    (allow ? allowed : rejected) += "\n- " + describe_approval_key(key);
  std::string text = session.remembered_permissions.empty()
                         ? "No answer is remembered: \"Always allow\" or \"Always reject\" in a permission prompt adds one."
                         : (allowed.empty() ? "" : "Always allowed:" + allowed + "\n") +
                               (rejected.empty() ? "" : "Always rejected:" + rejected + "\n") +
                               "`/permissions clear` forgets them.";
  notify(session, {NoticeSeverity::Info, "Remembered answers", std::move(text)});
}

}  // namespace runtime
