#pragma once
// Whether the model's commands on `local` run in the sandbox, and how (README "Sandbox"): in
// every mode but Full auto (also there with `sandbox: always`; never with `sandbox: off`), they
// may write only in the session's roots and the temp folders, and neither read nor write the
// config root (credentials, MCP tokens, hooks). When the sandbox is due but cannot be applied,
// commands are refused with the reason and the way to opt out; they never run unconfined.
#include <filesystem>
#include <vector>

#include "runtime/config/main_config.hpp"
#include "runtime/protocol/modes.hpp"
#include "runtime/protocol/tool_env.hpp"

namespace runtime {

struct Session;

struct SandboxFacts {
  config::SandboxSetting setting = config::SandboxSetting::On;
  Mode mode = Mode::Default;
  std::vector<std::filesystem::path> roots;  // the session's cwd and additional directories
  std::filesystem::path config_root;
  std::filesystem::path program;  // the helper (this openvaala); empty: unknown
  int landlock_abi = 0;           // bridge::process::sandbox::landlock_abi(): < 0 when there is none
};

CommandSandbox command_sandbox(const SandboxFacts& facts);

// For a call on local in `session`: its mode, roots and config, this kernel, this program.
CommandSandbox command_sandbox_for(const Session& session);

}  // namespace runtime
