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
  // Where the call runs: the session's default executor, or the one the call names. A tool runs
  // anywhere but `local` through ToolContext::executor() only.
  std::string executor = "local";
  bool on_local() const { return executor == "local"; }
};

}  // namespace runtime
