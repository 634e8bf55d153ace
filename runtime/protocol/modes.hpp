#pragma once
// What the agent may do without asking: the session modes (DESIGN §11). The ids are what the
// editor picks from and what the session journal keeps.
#include <optional>
#include <string_view>
#include <vector>

namespace runtime {

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
// "default, accept_edits, read_only, full_auto", for error messages.
std::string mode_ids_text();

}  // namespace runtime
