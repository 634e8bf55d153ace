#include "runtime/protocol/modes.hpp"

#include <string>

namespace runtime {

const std::vector<ModeInfo>& all_modes() {
  static const std::vector<ModeInfo> modes{
      {Mode::Default, "default", "Ask", "Ask before editing files, running commands or reading outside the session's folder"},
      {Mode::AcceptEdits, "accept_edits", "Accept edits", "Edit files in the session's folder without asking; ask before other edits and commands"},
      {Mode::ReadOnly, "read_only", "Read only", "Read and answer only: no edits, no commands"},
      {Mode::FullAuto, "full_auto", "Full auto", "Edit files and run commands without asking"},
  };
  return modes;
}

std::optional<Mode> mode_from_id(std::string_view id) {
  for (const auto& m : all_modes())
    if (id == m.id) return m.mode;
  return std::nullopt;
}

const char* mode_id(Mode m) {
  for (const auto& info : all_modes())
    if (info.mode == m) return info.id;
  return "default";
}

std::string mode_ids_text() {
  std::string out;
  for (const auto& m : all_modes()) out += (out.empty() ? "" : ", ") + std::string(m.id);
  return out;
}

}  // namespace runtime
