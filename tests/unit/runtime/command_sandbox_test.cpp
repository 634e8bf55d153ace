// When the model's commands on local run in the sandbox, with what, and the refusal when it is
// due but this kernel has no Landlock (README "Sandbox").
#include "runtime/agent/command_sandbox.hpp"

#include <gtest/gtest.h>

#include <cerrno>

using namespace runtime;
using config::SandboxSetting;

namespace {

SandboxFacts facts(SandboxSetting setting, Mode mode, int abi = 4) {
  SandboxFacts f;
  f.setting = setting;
  f.mode = mode;
  f.roots = {"/work/ws", "/work/extra"};
  f.config_root = "/home/me/.config/openvaala";
  f.program = "/usr/bin/openvaala";
  f.landlock_abi = abi;
  return f;
}

TEST(CommandSandbox, InEveryModeButFullAutoCommandsRunThroughTheHelperWithTheRootsAndTheConfigRootDenied) {
  const std::vector<std::string> expected{
      "/usr/bin/openvaala", "sandbox",
      "--deny", "/home/me/.config/openvaala",
      "--deny", "/home/me/.config/openvaala/credentials.yaml",
      "--deny", "/home/me/.config/openvaala/mcp_tokens.json",
      "--write", "/work/ws",
      "--write", "/work/extra",
      "--"};
  for (Mode mode : {Mode::Default, Mode::AcceptEdits, Mode::ReadOnly}) {
    auto s = command_sandbox(facts(SandboxSetting::On, mode));
    EXPECT_EQ(s.prefix, expected) << mode_id(mode);
    EXPECT_EQ(s.refusal, "") << mode_id(mode);
  }
}

TEST(CommandSandbox, FullAutoRunsUnconfinedUnlessAlways) {
  auto s = command_sandbox(facts(SandboxSetting::On, Mode::FullAuto));
  EXPECT_TRUE(s.prefix.empty());
  EXPECT_EQ(s.refusal, "");
  EXPECT_FALSE(command_sandbox(facts(SandboxSetting::Always, Mode::FullAuto)).prefix.empty());
}

TEST(CommandSandbox, OffRunsUnconfinedInEveryModeEvenWithoutLandlock) {
  for (Mode mode : {Mode::Default, Mode::AcceptEdits, Mode::FullAuto}) {
    auto s = command_sandbox(facts(SandboxSetting::Off, mode, -ENOSYS));
    EXPECT_TRUE(s.prefix.empty()) << mode_id(mode);
    EXPECT_EQ(s.refusal, "") << mode_id(mode);
  }
}

TEST(CommandSandbox, WithoutLandlockCommandsAreRefusedWithTheReasonAndTheOptOut) {
  auto s = command_sandbox(facts(SandboxSetting::On, Mode::AcceptEdits, -ENOSYS));
  EXPECT_TRUE(s.prefix.empty());
  EXPECT_NE(s.refusal.find("Linux 5.13"), std::string::npos) << s.refusal;
  EXPECT_NE(s.refusal.find("was not run"), std::string::npos) << s.refusal;
  EXPECT_NE(s.refusal.find("'sandbox: off' in /home/me/.config/openvaala/config.yaml"), std::string::npos) << s.refusal;
  auto disabled = command_sandbox(facts(SandboxSetting::Always, Mode::FullAuto, -EOPNOTSUPP));
  EXPECT_NE(disabled.refusal.find("disabled"), std::string::npos) << disabled.refusal;
}

TEST(CommandSandbox, WithoutAKnownHelperCommandsAreRefused) {
  auto f = facts(SandboxSetting::On, Mode::Default);
  f.program.clear();
  auto s = command_sandbox(f);
  EXPECT_TRUE(s.prefix.empty());
  EXPECT_NE(s.refusal.find("was not run"), std::string::npos) << s.refusal;
}

}  // namespace
