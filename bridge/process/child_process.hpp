#pragma once
// Runs a child process to completion: stdin fed from a string, stdout/stderr captured with a
// cap, a timeout, and cancellation. The child leads its own process group, and on timeout or
// cancel the whole group is killed (SIGTERM, then SIGKILL), so nothing it started outlives it.
// Blocking: call it from a worker thread, never from the io_context thread.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bridge::process {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH when it has no '/'
  std::string cwd;                // empty = inherit
  // Added to (or replacing entries of) the inherited environment.
  std::vector<std::pair<std::string, std::string>> env_overlay;
  std::string stdin_data;                            // written then stdin is closed
  std::chrono::milliseconds timeout{0};              // 0 = none
  std::size_t max_output_bytes = 64 * 1024;          // per stream; the rest is read and dropped
  // stdin stays open (after stdin_data) until the process ends: a remote wrapper takes its EOF
  // as "stop" (bridge users of ssh), so it must not come early.
  bool keep_stdin_open = false;
  // stderr into the stdout pipe, in the order written (as a terminal shows them).
  bool merge_stderr = false;
  // Each chunk of stdout as it is read, on the calling thread (in addition to the capture).
  std::function<void(std::string_view)> on_stdout;
  // Called once the child runs, with its process group (what it leaves in the background stays in
  // that group after run_process returns: the executor helper ends those groups when it exits).
  std::function<void(pid_t pgid)> on_start;
};

struct ProcessResult {
  bool started = false;
  std::string spawn_error;            // why it could not start (started == false)
  std::optional<int> exit_code;       // set when it exited normally
  std::optional<int> term_signal;     // set when a signal ended it
  bool timed_out = false;
  bool cancelled = false;
  std::string stdout_data;
  std::string stderr_data;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
};

// `cancel` is polled; setting it kills the process group and returns promptly (< 100 ms).
ProcessResult run_process(const ProcessSpec& spec, const std::atomic<bool>* cancel = nullptr);

}  // namespace bridge::process
