#pragma once
// What a tool may know of the session it runs in: no more than this, so a tool cannot reach
// into the engine, the journal or the editor's protocol.
#include <filesystem>
#include <string>

#include "runtime/protocol/modes.hpp"

namespace runtime {

struct ToolEnv {
  std::string session_id;
  std::filesystem::path cwd;  // the working directory; relative paths start here
  Mode mode = Mode::Default;
};

}  // namespace runtime
