#pragma once
// The approval policy: whether a tool call may run, must be refused, or needs the user's answer
// (DESIGN §11), and what the user's answer means. Pure functions, tested as a table.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/agent/containment.hpp"
#include "runtime/protocol/editor_host.hpp"
#include "runtime/protocol/modes.hpp"
#include "runtime/tools/tool.hpp"

namespace runtime::approval {

// The one name of a permission decision. Forbid: refused in every mode without asking (the
// credentials file); Cancelled: the prompt was cancelled with the turn (no rejection).
enum class Verdict { Allow, Reject, Ask, Forbid, Cancelled };

struct Request {
  Mode mode = Mode::Default;
  tools::Permission permission = tools::Permission::None;
  bool hook_allowed = false;             // a PreToolUse hook answered "allow"
  std::optional<bool> remembered;        // an earlier "always" answer for this tool
  containment::Place place = containment::Place::Inside;  // where the files it reads or edits lie
};

// In order: the credentials file is forbidden; a call that needs nothing, or reads inside the
// roots, runs; the mode decides what it can (Read only refuses edits and commands, Full auto
// allows, Accept edits allows edits inside the roots but not in the config root); then a hook's
// allow; then an earlier "always" answer (a refusal anywhere, an allow inside the roots only);
// else the user is asked.
Verdict decide(const Request& request);

// What an "always" answer to a call is remembered by (issue 36), and how the options name it.
struct Memory {
  std::vector<std::string> keys;
  std::string label;
};

// What an answer to this call would be remembered by: a command or an MCP tool by the keys it
// declares; an edit inside the roots by the root it is in (`roots`: the session's, its working
// directory first, named "this workspace"), never beyond them (an edit outside or in the config
// root is not remembered at all); a read outside by the folders of its `resolved` files (a
// symlink never widens it; none resolved: not remembered); a read inside never (it asks nothing).
Memory memory_of(const tools::ApprovalRequest& request, containment::Place place,
                 const std::vector<std::filesystem::path>& roots, const std::vector<std::filesystem::path>& resolved);

// An earlier "always" answer covering every key of a call: a refusal of any key holds, an allow
// needs every key (a compound command runs unasked only when each part was allowed). No keys:
// nothing is remembered.
std::optional<bool> remembered(const std::map<std::string, bool>& answers, const std::vector<std::string>& keys);

struct Answer {
  Verdict verdict;  // Allow, Reject or Cancelled
  std::optional<bool> remember;  // set: remember for this tool, allowed (true) or refused (false)
};

// What the user's answer to a permission prompt means. A cancelled prompt is no rejection: the
// turn is being cancelled.
Answer interpret(PermissionAnswer answer);

}  // namespace runtime::approval
