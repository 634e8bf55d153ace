#pragma once
// What a tool may know of the session it runs in: no more than this, so a tool cannot reach
// into the engine, the journal or the editor's protocol.
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/protocol/modes.hpp"

namespace runtime {

// How the model's commands run on `local` (README "Sandbox"): through the sandbox helper, or
// refused when the sandbox is due but cannot be applied (never run unconfined instead).
struct CommandSandbox {
  std::vector<std::string> prefix;  // the helper's argv before `bash -c …`; empty: no sandbox
  std::string refusal;              // not empty: commands do not run, and this says why
};

struct ToolEnv {
  std::string session_id;
  std::filesystem::path cwd;  // the working directory; relative paths start here
  Mode mode = Mode::Default;
  // Where the call runs: the session's default executor, or the one the call names. A tool runs
  // anywhere but `local` through ToolContext::executor() only.
  std::string executor = "local";
  bool on_local() const { return executor == "local"; }
  CommandSandbox sandbox;  // set by the tool router for calls on local
};

}  // namespace runtime
