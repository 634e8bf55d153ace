#pragma once
// What a command run in the editor's terminal reports: the same data on both sides of the wall
// between the protocol (acp::ClientApi) and the engine (runtime::EditorHost).
#include <cstdint>
#include <optional>
#include <string>

namespace support {

// How the command ended: its exit code, or the signal that killed it.
struct TerminalExit {
  std::optional<std::int64_t> exit_code;
  std::optional<std::string> signal;
};

// What the terminal printed so far; exit_status once the command has ended.
struct TerminalOutput {
  std::string output;
  bool truncated = false;
  std::optional<TerminalExit> exit_status;
};

}  // namespace support
