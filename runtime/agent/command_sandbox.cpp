#include "runtime/agent/command_sandbox.hpp"

#include "bridge/mcp/oauth_store.hpp"
#include "bridge/process/sandbox.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/config/credentials.hpp"
#include "runtime/config/paths.hpp"

namespace runtime {

namespace sandbox = bridge::process::sandbox;

namespace {

bool sandbox_due(config::SandboxSetting setting, Mode mode) {
  switch (setting) {
    case config::SandboxSetting::Off: return false;
    case config::SandboxSetting::Always: return true;
    case config::SandboxSetting::On: return mode != Mode::FullAuto;
  }
  return true;
}

}  // namespace

CommandSandbox command_sandbox(const SandboxFacts& facts) {
  CommandSandbox out;
  if (!sandbox_due(facts.setting, facts.mode)) return out;
  const std::string opt_out = " The command was not run. To run commands without the sandbox, set 'sandbox: off' in " +
                              (facts.config_root / "config.yaml").string() + ".";
  if (facts.landlock_abi < 0) {
    out.refusal = "Commands run in a Landlock sandbox in this mode, but " + sandbox::unavailable_reason(facts.landlock_abi) +
                  "." + opt_out;
    return out;
  }
  if (facts.program.empty()) {
    out.refusal = "Commands run in a sandbox in this mode, but this server does not know its own program to apply it." + opt_out;
    return out;
  }
  sandbox::Policy policy;
  policy.write = facts.roots;
  policy.deny = {facts.config_root, config::credentials_file(facts.config_root),
                 bridge::mcp::oauth::token_file(facts.config_root)};
  out.prefix = sandbox::helper_argv(facts.program, policy);
  return out;
}

CommandSandbox command_sandbox_for(const Session& session) {
  static const int abi = sandbox::landlock_abi();  // the kernel's: asked once
  SandboxFacts facts;
  facts.mode = session.settings.mode;
  facts.roots.push_back(session.settings.cwd);
  facts.roots.insert(facts.roots.end(), session.settings.additional_roots.begin(), session.settings.additional_roots.end());
  if (session.services.engine) {
    facts.setting = session.services.engine->main_config().sandbox;
    facts.config_root = session.services.engine->options().config_root;
  } else {
    facts.config_root = config::config_root();
  }
  facts.program = sandbox::helper_program();
  facts.landlock_abi = abi;
  return command_sandbox(facts);
}

}  // namespace runtime
