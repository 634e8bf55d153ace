#pragma once
// One conversation with the editor: its folder, mode, history and the turn in flight.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acp/cancellation.hpp"
#include "runtime/agent/conversation.hpp"

namespace runtime {

// What the agent may do without asking (ACP session modes).
enum class Mode { Default, AcceptEdits, ReadOnly, FullAuto };

struct ModeInfo {
  Mode mode;
  const char* id;
  const char* name;
  const char* description;
};
const std::vector<ModeInfo>& all_modes();
std::optional<Mode> mode_from_id(std::string_view id);
const char* mode_id(Mode m);

struct Session {
  std::string id;
  std::filesystem::path cwd;
  Mode mode = Mode::Default;
  std::vector<Message> history;
  // allow_always / reject_always answers, by tool name, for the rest of the session.
  std::map<std::string, bool> remembered_permissions;
  // The prompt turn in flight, if any; session/cancel fires it.
  acp::CancelSourcePtr turn_cancel;
};

}  // namespace runtime
