#pragma once
// `/permissions`: the answers remembered for the session ("Always allow" / "Always reject", by
// approval key), listed; `/permissions clear` forgets them. Answered with a notice, no model call.
#include <optional>
#include <string>

#include "runtime/agent/session.hpp"

namespace runtime {

// The command's argument ("" or "clear") when `text` is the command: a skill of that name takes
// the slash command instead, as with /compact.
std::optional<std::string> permissions_command(const Session& session, const std::string& text);
// Runs it: the list (or the clearing) shown as a notice; an unknown argument says what it takes.
void run_permissions_command(Session& session, const std::string& argument);
// How the list names an approval key: "`npm test` (commands)", "edits in /work/app".
std::string describe_approval_key(const std::string& key);

}  // namespace runtime
