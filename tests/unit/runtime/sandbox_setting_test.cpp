// config.yaml's `sandbox:` (README "Sandbox"): on by default; a value it does not know is an
// error that leaves it on, so a typo never turns the sandbox off.
#include "runtime/config/main_config.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using runtime::config::Diagnostics;
using runtime::config::SandboxSetting;

SandboxSetting load(const std::string& yaml, Diagnostics& d) {
  auto dir = fs::temp_directory_path() / ("ov-sandbox-setting-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "config.yaml") << yaml;
  auto setting = runtime::config::load_main_config(dir, d).sandbox;
  fs::remove_all(dir);
  return setting;
}

TEST(SandboxSetting, OnByDefaultOffAndAlwaysWhenWritten) {
  Diagnostics d;
  EXPECT_EQ(load("max_turn_requests: 3\n", d), SandboxSetting::On);
  EXPECT_EQ(load("sandbox: on\n", d), SandboxSetting::On);
  EXPECT_EQ(load("sandbox: off\n", d), SandboxSetting::Off);
  EXPECT_EQ(load("sandbox: always\n", d), SandboxSetting::Always);
  EXPECT_TRUE(d.empty()) << d.front().to_string();
}

TEST(SandboxSetting, AnUnknownValueIsAnErrorWithItsLineAndKeepsTheSandboxOn) {
  Diagnostics d;
  EXPECT_EQ(load("max_turn_requests: 3\nsandbox: of\n", d), SandboxSetting::On);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].line, 2);
  EXPECT_NE(d[0].message.find("'on'"), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].message.find("'of'"), std::string::npos) << d[0].message;
}

}  // namespace
