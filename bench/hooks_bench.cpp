// Added latency of a hook invocation over the script's own run time.
//
//   hooks_bench [iterations]    (default 300)
//
// Each case runs the same trivial script (`#!/bin/sh` + `exit 0`) `iterations` times and
// reports the median and p90 wall time per run:
//   raw        posix_spawn + waitpid of the script, nothing else (the script's own cost)
//   raw-bash   posix_spawn of `bash -c <script>`: the floor for a hook, which the seed runs via bash
//   process    bridge::process::run_process on the script (process group, pipes, stdin)
//   hook       run_hooks with `script:` (cache check + copy lookup, `bash -c`, stdin JSON,
//              answer parsing): what a PreToolUse hook adds to a tool call
//   command    run_hooks with `command: /path/true.sh` (`bash -c`, no cache)
//   json       run_hooks with a `script:` that prints a permissionDecision JSON answer
//   nomatch    run_hooks when no hook matches the event (the cost on every tool call)
// "added" = median(case) - median(raw).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string_view>
#include <string>
#include <vector>

#include "bridge/process/child_process.hpp"
#include "runtime/hooks/hooks.hpp"

extern char** environ;

namespace fs = std::filesystem;
using namespace runtime::hooks;
using Clock = std::chrono::steady_clock;

namespace {

struct Stats {
  double median_us, p90_us;
};

void write_script(const fs::path& p, const std::string& body) {
  std::ofstream(p) << body;
  fs::permissions(p, fs::perms(0755));
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 300;
  char tmpl[] = "/tmp/openvaala-hooks-bench-XXXXXX";
  const fs::path root = ::mkdtemp(tmpl);
  const fs::path config = root / "config";
  fs::create_directories(config / "hooks");
  ::setenv("OPENVAALA_CACHE_DIR", (root / "cache").c_str(), 1);
  const fs::path script = config / "hooks" / "true.sh";
  write_script(script, "#!/bin/sh\nexit 0\n");
  write_script(config / "hooks" / "allow.sh",
               "#!/bin/sh\nprintf '%s' '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\"}}'\n");

  auto load_one = [&](const std::string& event, const std::string& entry) {
    std::ofstream(config / "hooks" / "bench.yaml")
        << "hooks:\n  " << event << ":\n    - matcher: bash\n      hooks:\n        - type: command\n          " << entry
        << "\n";
    runtime::config::Diagnostics d;
    auto set = load_hooks(config, {}, d);
    if (!d.empty() || set.hooks.size() != 1) {
      std::fprintf(stderr, "bench config failed to load: %s\n", d.empty() ? "?" : d[0].to_string().c_str());
      std::exit(1);
    }
    return set;
  };
  HookInput in;
  in.session_id = "s";
  in.turn_id = "t";
  in.cwd = root;
  in.tool_name = "bash";
  in.tool_input = boost::json::object{{"command", "ls -la"}};
  in.tool_use_id = "c1";

  struct Case {
    const char* name;
    std::function<void()> fn;
    std::vector<double> us;
  };
  std::vector<Case> cases;
  cases.push_back({"raw", [&] {
                     pid_t pid;
                     char* args[] = {const_cast<char*>(script.c_str()), nullptr};
                     if (posix_spawn(&pid, script.c_str(), nullptr, nullptr, args, environ) != 0) std::abort();
                     int st;
                     waitpid(pid, &st, 0);
                   }, {}});
  const std::string bash_line = "'" + script.string() + "'";
  cases.push_back({"raw-bash", [&] {
                     pid_t pid;
                     char* args[] = {const_cast<char*>("bash"), const_cast<char*>("-c"),
                                     const_cast<char*>(bash_line.c_str()), nullptr};
                     if (posix_spawnp(&pid, "bash", nullptr, nullptr, args, environ) != 0) std::abort();
                     int st;
                     waitpid(pid, &st, 0);
                   }, {}});
  cases.push_back({"process", [&] {
                     bridge::process::ProcessSpec spec;
                     spec.argv = {script.string()};
                     spec.stdin_data = "{}";
                     auto r = bridge::process::run_process(spec);
                     if (r.exit_code != 0) std::abort();
                   }, {}});
  auto hook_set = load_one("PreToolUse", "script: true.sh");
  cases.push_back({"hook", [&] {
                     auto o = run_hooks(hook_set, HookEvent::PreToolUse, in);
                     if (o.runs.size() != 1 || !o.errors.empty()) std::abort();
                   }, {}});
  auto command_set = load_one("PreToolUse", "command: " + script.string());
  cases.push_back({"command", [&] {
                     auto o = run_hooks(command_set, HookEvent::PreToolUse, in);
                     if (o.runs.size() != 1 || !o.errors.empty()) std::abort();
                   }, {}});
  auto json_set = load_one("PreToolUse", "script: allow.sh");
  cases.push_back({"json", [&] {
                     auto o = run_hooks(json_set, HookEvent::PreToolUse, in);
                     if (o.permission != PermissionDecision::Allow) std::abort();
                   }, {}});
  HookInput other = in;
  other.tool_name = "read_file";
  cases.push_back({"nomatch", [&] {
                     auto o = run_hooks(hook_set, HookEvent::PreToolUse, other);
                     if (!o.runs.empty()) std::abort();
                   }, {}});

  // Interleaved, so a change in machine load hits every case alike.
  for (auto& c : cases)
    for (int i = 0; i < 10; ++i) c.fn();  // warm up (page cache, script cache)
  for (int i = 0; i < n; ++i)
    for (auto& c : cases) {
      auto t0 = Clock::now();
      c.fn();
      c.us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  struct Row {
    const char* name;
    Stats s;
  };
  std::vector<Row> rows;
  for (auto& c : cases) {
    std::sort(c.us.begin(), c.us.end());
    rows.push_back({c.name, {c.us[c.us.size() / 2], c.us[c.us.size() * 9 / 10]}});
  }

  const double raw = rows[0].s.median_us;
  std::printf("%-8s %12s %12s %12s   (n=%d)\n", "case", "median_us", "p90_us", "added_us", n);
  for (const auto& r : rows)
    std::printf("%-8s %12.1f %12.1f %12.1f\n", r.name, r.s.median_us, r.s.p90_us, r.s.median_us - raw);
  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
}
