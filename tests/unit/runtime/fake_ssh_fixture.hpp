#pragma once
// The `ssh` executor's unit-test fixture (executors_ssh_test.cpp, executors_helper_test.cpp): a
// fake `ssh` first on PATH records each command line it is given and runs the remote command
// with `sh -c` in a local folder that plays the remote home, so the scripts the executor sends
// really run and the ssh command lines can be read back. FAKE_SSH_FAIL_FILE, when that file
// exists, makes every call fail as ssh does (exit 255, the file's text on stderr): a host that
// refuses, a key that is refused, a dropped line.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "executor_test_util.hpp"
#include "runtime/config/executor_config.hpp"
#include "runtime/protocol/executor_paths.hpp"

namespace executor_test {

using runtime::RunRequest;
using runtime::config::ExecutorConfig;
using runtime::executors::make_ssh_executor;

constexpr const char* kFakeSsh = R"(#!/bin/sh
# records this command line (NUL-separated), then acts as ssh to a host whose home is $FAKE_SSH_HOME
n=$(ls "$FAKE_SSH_LOG" | wc -l)
printf '%s\0' "$@" > "$FAKE_SSH_LOG/call-$(printf %04d "$n")-$$"
if [ -e "$FAKE_SSH_FAIL_FILE" ]; then cat "$FAKE_SSH_FAIL_FILE" >&2; exit 255; fi
control=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o|-p|-l|-i|-L) shift 2 ;;
    -O) control=$2; shift 2 ;;
    *) break ;;
  esac
done
shift  # the host
[ -n "$control" ] && exit 0
unset XDG_CONFIG_HOME  # the remote user's own, not this test's
cd "$FAKE_SSH_HOME" && HOME="$FAKE_SSH_HOME" exec sh -c "$*"
)";

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class SshExecutor : public ExecutorTest {
 protected:
  SshExecutor() {
    home = dir / "remote-home";
    fs::create_directories(home / "work");
    fs::create_directories(dir / "bin");
    fs::create_directories(dir / "calls");
    fs::create_directories(dir / "control");
    write_text(dir / "bin" / "ssh", kFakeSsh);
    fs::permissions(dir / "bin" / "ssh", fs::perms(0755));
    saved_path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
    ::setenv("PATH", ((dir / "bin").string() + ":" + saved_path).c_str(), 1);
    ::setenv("FAKE_SSH_LOG", (dir / "calls").c_str(), 1);
    ::setenv("FAKE_SSH_HOME", home.c_str(), 1);
    ::setenv("FAKE_SSH_FAIL_FILE", (dir / "fail").c_str(), 1);
    config.id = "box";
    config.type = ExecutorConfig::Type::Ssh;
    config.host = "devbox";
    config.user = "me";
    config.port = 2222;
    config.identity_file = dir / "id_test";
    config.ssh_options = {"ProxyJump=bastion"};
    config.workdir = "~/work";
    config.env = {{"OV_GREETING", "hello there"}};
    config.helper = false;  // the per-operation scripts; SshExecutorWithHelper turns it on
  }
  ~SshExecutor() override {
    if (executor) executor->shutdown();
    ::setenv("PATH", saved_path.c_str(), 1);
    ::unsetenv("FAKE_SSH_LOG");
    ::unsetenv("FAKE_SSH_HOME");
    ::unsetenv("FAKE_SSH_FAIL_FILE");
  }

  runtime::Executor& ex() {
    if (!executor) executor = make_ssh_executor(deps(), config, dir / "control");
    return *executor;
  }
  // Every ssh command line so far, in order, each as its argv without "ssh".
  std::vector<std::vector<std::string>> calls() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir / "calls")) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    std::vector<std::vector<std::string>> out;
    for (const auto& n : names) {
      std::string all = read_text(dir / "calls" / n);
      std::vector<std::string> argv;
      for (std::size_t at = 0, end; (end = all.find('\0', at)) != std::string::npos; at = end + 1)
        argv.push_back(all.substr(at, end - at));
      out.push_back(std::move(argv));
    }
    return out;
  }
  void fail_as_ssh(const std::string& stderr_text) { write_text(dir / "fail", stderr_text); }
  std::string error(std::function<void()> f) {
    try {
      f();
      return "";
    } catch (const runtime::ExecutorError& e) {
      return e.what();
    }
  }
  runtime::RunResult bash(const std::string& command) {
    RunRequest r;
    r.command = command;
    return run(ex().run(std::move(r), nullptr));
  }

  fs::path home;
  std::string saved_path;
  ExecutorConfig config;
  std::shared_ptr<runtime::Executor> executor;
};

inline std::string joined(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace executor_test
