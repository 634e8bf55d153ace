#include "bridge/process/child_process.hpp"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <future>
#include <memory>
#include <fstream>
#include <sstream>
#include <thread>

using namespace bridge::process;
using namespace std::chrono_literals;

namespace {

ProcessSpec spec_of(std::vector<std::string> argv) {
  ProcessSpec s;
  s.argv = std::move(argv);
  return s;
}

// Alive and not a zombie waiting for whoever adopted it to reap it.
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

// Gives whoever reaps orphans a moment.
bool gone_soon(pid_t pid) {
  for (int i = 0; i < 100; ++i) {
    if (!alive(pid)) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

std::vector<pid_t> pids_in(const std::string& text) {
  std::vector<pid_t> out;
  std::istringstream in(text);
  long p;
  while (in >> p) out.push_back(static_cast<pid_t>(p));
  return out;
}

template <typename F>
std::chrono::milliseconds time_of(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
}

}  // namespace

TEST(ChildProcess, CapturesStdoutAndStderr) {
  auto r = run_process(spec_of({"sh", "-c", "echo out; echo err >&2"}));
  ASSERT_TRUE(r.started) << r.spawn_error;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.term_signal);
  EXPECT_EQ(r.stdout_data, "out\n");
  EXPECT_EQ(r.stderr_data, "err\n");
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.cancelled);
  EXPECT_FALSE(r.stdout_truncated);
  EXPECT_FALSE(r.stderr_truncated);
}

TEST(ChildProcess, ArgvIsPassedVerbatim) {
  auto r = run_process(spec_of({"/bin/echo", "a b", "$HOME", "*"}));
  ASSERT_TRUE(r.started) << r.spawn_error;
  EXPECT_EQ(r.stdout_data, "a b $HOME *\n");
}

TEST(ChildProcess, StdinRoundTrip) {
  auto s = spec_of({"cat"});
  s.stdin_data = "hello\nworld\n";
  s.timeout = 5s;  // without the end of its input, cat would wait for ever
  auto r = run_process(s);
  ASSERT_TRUE(r.started);
  ASSERT_FALSE(r.timed_out) << "the child gets end-of-file once its input is written (a hook reading all of stdin ends)";
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data, "hello\nworld\n");
}

TEST(ChildProcess, LargeStdinAndStdoutDoNotDeadlock) {
  // 2 MB through cat: both pipes fill up many times over.
  auto s = spec_of({"cat"});
  s.stdin_data.assign(2 * 1024 * 1024, 'x');
  s.max_output_bytes = 4 * 1024 * 1024;
  s.timeout = 20s;
  auto r = run_process(s);
  ASSERT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data.size(), s.stdin_data.size());
}

TEST(ChildProcess, ChildThatIgnoresStdinDoesNotBreakTheParent) {
  // The child exits without reading: the write fails with EPIPE and no SIGPIPE kills us.
  auto s = spec_of({"sh", "-c", "exec 0<&-; echo done"});
  s.stdin_data.assign(1024 * 1024, 'y');
  s.timeout = 20s;
  auto r = run_process(s);
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data, "done\n");
}

TEST(ChildProcess, ExitCodes) {
  auto r = run_process(spec_of({"sh", "-c", "exit 3"}));
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.term_signal);
  r = run_process(spec_of({"false"}));
  EXPECT_EQ(r.exit_code, 1);
}

TEST(ChildProcess, SignalDeath) {
  auto r = run_process(spec_of({"sh", "-c", "kill -KILL $$"}));
  ASSERT_TRUE(r.started);
  EXPECT_FALSE(r.exit_code);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_FALSE(r.timed_out);
}

TEST(ChildProcess, ChildLeadsItsOwnProcessGroup) {
  auto r = run_process(spec_of({"sh", "-c", "echo $$; ps -o pgid= -p $$ 2>/dev/null || "
                                            "cut -d' ' -f5 /proc/$$/stat"}));
  ASSERT_TRUE(r.started);
  auto ids = pids_in(r.stdout_data);
  ASSERT_EQ(ids.size(), 2u) << r.stdout_data;
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_NE(ids[1], ::getpgrp());
}

TEST(ChildProcess, TimeoutKillsTheWholeGroup) {
  auto s = spec_of({"bash", "-c", "sleep 30 & echo $!; sleep 30"});
  s.timeout = 500ms;
  ProcessResult r;
  auto took = time_of([&] { r = run_process(s); });
  ASSERT_TRUE(r.started) << r.spawn_error;
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.cancelled);
  EXPECT_LT(took, 5s);
  EXPECT_GE(took, 400ms);
  EXPECT_EQ(r.term_signal, SIGTERM);
  auto ids = pids_in(r.stdout_data);
  ASSERT_EQ(ids.size(), 1u) << r.stdout_data;
  EXPECT_TRUE(gone_soon(ids[0])) << "grandchild " << ids[0] << " survived";
}

TEST(ChildProcess, TimeoutEscalatesToSigkill) {
  // The child ignores SIGTERM and writes its pid (= its process group) so that, should
  // run_process never escalate to SIGKILL, the test can end it itself and fail in seconds
  // instead of hanging until ctest's timeout.
  char dir[] = "/tmp/openvaala-sigkill-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string pid_file = std::string(dir) + "/pid";
  auto s = spec_of({"bash", "-c", "trap '' TERM; echo $$ > '" + pid_file + "'; echo ready; while :; do sleep 0.05; done"});
  s.timeout = 300ms;
  auto task = std::make_shared<std::packaged_task<ProcessResult()>>([s] { return run_process(s); });
  auto done = task->get_future();
  auto t0 = std::chrono::steady_clock::now();
  std::thread worker([task] { (*task)(); });
  const bool returned = done.wait_for(5s) == std::future_status::ready;
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  if (!returned) {
    std::ifstream in(pid_file);
    pid_t pgid = 0;
    in >> pgid;
    if (pgid > 0) ::kill(-pgid, SIGKILL);  // what run_process should have done
    if (done.wait_for(5s) != std::future_status::ready) worker.detach();  // never wait forever
  }
  if (worker.joinable()) worker.join();
  std::remove(pid_file.c_str());
  ::rmdir(dir);
  ASSERT_TRUE(returned) << "promise: on timeout a child that ignores SIGTERM is SIGKILLed (after a short grace); "
                           "run_process had not returned 5 s after a 300 ms timeout";
  auto r = done.get();
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(took, 5s);
  EXPECT_EQ(r.term_signal, SIGKILL) << "the child that ignores SIGTERM ends by SIGKILL";
  EXPECT_EQ(r.stdout_data, "ready\n");
}

TEST(ChildProcess, ExitedChildWithGrandchildHoldingThePipesReturns) {
  // bash exits at once; the background sleep keeps stdout open.
  auto s = spec_of({"bash", "-c", "sleep 30 & echo $!"});
  ProcessResult r;
  auto took = time_of([&] { r = run_process(s); });
  ASSERT_TRUE(r.started);
  EXPECT_LT(took, 5s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  auto ids = pids_in(r.stdout_data);
  ASSERT_EQ(ids.size(), 1u) << r.stdout_data;
  EXPECT_TRUE(gone_soon(ids[0])) << "grandchild " << ids[0] << " survived";
}

TEST(ChildProcess, CancelFromAnotherThread) {
  std::atomic<bool> cancel{false};
  std::thread t([&] {
    std::this_thread::sleep_for(200ms);
    cancel = true;
  });
  ProcessResult r;
  auto took = time_of([&] { r = run_process(spec_of({"sleep", "30"}), &cancel); });
  t.join();
  ASSERT_TRUE(r.started);
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(took, 5s);
}

TEST(ChildProcess, OutputCap) {
  auto s = spec_of({"sh", "-c", "head -c 1048576 /dev/zero | tr '\\0' a; echo tail >&2"});
  s.max_output_bytes = 1000;
  auto r = run_process(s);
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 0);  // the rest was read, so the writer never blocked
  EXPECT_EQ(r.stdout_data, std::string(1000, 'a'));
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_EQ(r.stderr_data, "tail\n");
  EXPECT_FALSE(r.stderr_truncated);
}

TEST(ChildProcess, OutputExactlyAtTheCapIsNotTruncated) {
  auto s = spec_of({"printf", "12345"});
  s.max_output_bytes = 5;
  auto r = run_process(s);
  EXPECT_EQ(r.stdout_data, "12345");
  EXPECT_FALSE(r.stdout_truncated);
}

TEST(ChildProcess, MissingBinary) {
  auto r = run_process(spec_of({"/nonexistent/openvaala-no-such-binary", "x"}));
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.spawn_error,
            "cannot execute '/nonexistent/openvaala-no-such-binary': No such file or directory");
  EXPECT_FALSE(r.exit_code);

  r = run_process(spec_of({"openvaala-no-such-binary"}));
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.spawn_error,
            "cannot execute 'openvaala-no-such-binary': No such file or directory (not found on PATH)");
}

TEST(ChildProcess, NotExecutable) {
  char path[] = "/tmp/openvaala-noexec-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  auto r = run_process(spec_of({path}));
  ::unlink(path);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.spawn_error, std::string("cannot execute '") + path + "': Permission denied");
}

TEST(ChildProcess, EmptyArgv) {
  auto r = run_process(ProcessSpec{});
  EXPECT_FALSE(r.started);
  EXPECT_FALSE(r.spawn_error.empty());
}

TEST(ChildProcess, Cwd) {
  auto s = spec_of({"pwd"});
  s.cwd = "/tmp";
  auto r = run_process(s);
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.stdout_data, "/tmp\n");
}

TEST(ChildProcess, BadCwd) {
  auto s = spec_of({"pwd"});
  s.cwd = "/nonexistent/openvaala-dir";
  auto r = run_process(s);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.spawn_error,
            "cannot change directory to '/nonexistent/openvaala-dir': No such file or directory");
}

TEST(ChildProcess, EnvOverlay) {
  ::setenv("OPENVAALA_TEST_INHERITED", "kept", 1);
  ::setenv("OPENVAALA_TEST_REPLACED", "old", 1);
  auto s = spec_of({"sh", "-c",
                    "echo \"$OPENVAALA_TEST_INHERITED $OPENVAALA_TEST_REPLACED $OPENVAALA_TEST_NEW\"; "
                    "env | grep -c '^OPENVAALA_TEST_REPLACED='"});
  s.env_overlay = {{"OPENVAALA_TEST_REPLACED", "new"}, {"OPENVAALA_TEST_NEW", "added value"}};
  auto r = run_process(s);
  ::unsetenv("OPENVAALA_TEST_INHERITED");
  ::unsetenv("OPENVAALA_TEST_REPLACED");
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.stdout_data, "kept new added value\n1\n");
}

TEST(ChildProcess, OverlayPathIsUsedForLookup) {
  auto s = spec_of({"sh", "-c", "echo ok"});
  s.env_overlay = {{"PATH", "/nonexistent-dir"}};
  auto r = run_process(s);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.spawn_error, "cannot execute 'sh': No such file or directory (not found on PATH)");
}

TEST(ChildProcess, SigpipeIgnoredInParentIsDefaultInChild) {
  auto old = ::signal(SIGPIPE, SIG_IGN);
  auto r = run_process(spec_of({"sh", "-c", "grep SigIgn /proc/self/status"}));
  ::signal(SIGPIPE, old);
  ASSERT_TRUE(r.started);
  // SigIgn is a hex mask; SIGPIPE (13) is bit 12 = 0x1000.
  auto hex = r.stdout_data.substr(r.stdout_data.find(':') + 1);
  unsigned long long mask = std::stoull(hex, nullptr, 16);
  EXPECT_EQ(mask & (1ull << (SIGPIPE - 1)), 0u) << r.stdout_data;
}

TEST(ChildProcess, NoFileDescriptorLeaks) {
  auto count_fds = [] {
    int n = 0;
    for (int fd = 0; fd < 1024; ++fd)
      if (::fcntl(fd, F_GETFD) != -1) ++n;
    return n;
  };
  int before = count_fds();
  run_process(spec_of({"sh", "-c", "echo x"}));
  run_process(spec_of({"/nonexistent/binary"}));
  auto s = spec_of({"bash", "-c", "sleep 30 & sleep 30"});
  s.timeout = 100ms;
  run_process(s);
  EXPECT_EQ(count_fds(), before);
}

TEST(ChildProcess, ChildSeesNoInheritedPipeEnds) {
  // Only 0, 1 and 2 (plus whatever the test runner itself leaked without CLOEXEC) are open.
  auto r = run_process(spec_of({"sh", "-c", "ls /proc/self/fd | wc -l"}));
  auto parent_open = 0;
  for (int fd = 3; fd < 1024; ++fd)
    if (::fcntl(fd, F_GETFD) != -1 && !(::fcntl(fd, F_GETFD) & FD_CLOEXEC)) ++parent_open;
  // ls opens its own directory fd, so 3 standard + 1.
  EXPECT_EQ(std::stoi(r.stdout_data), 4 + parent_open) << r.stdout_data;
}

// What the executors need: stderr in stdout's order, output as it comes, and a stdin that stays
// open until the child ends (a remote wrapper takes its EOF as "stop").
TEST(ChildProcess, MergedStderrKeepsTheOrderWritten) {
  auto s = spec_of({"sh", "-c", "echo one; echo two >&2; echo three"});
  s.merge_stderr = true;
  auto r = run_process(s);
  EXPECT_EQ(r.stdout_data, "one\ntwo\nthree\n");
  EXPECT_EQ(r.stderr_data, "");
}

TEST(ChildProcess, OutputIsHandedOverWhileTheChildRuns) {
  auto s = spec_of({"sh", "-c", "echo first; sleep 0.5; echo second"});
  std::vector<std::pair<std::string, std::chrono::steady_clock::time_point>> chunks;
  s.on_stdout = [&](std::string_view c) { chunks.emplace_back(std::string(c), std::chrono::steady_clock::now()); };
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_process(s);
  ASSERT_GE(chunks.size(), 2u);
  EXPECT_EQ(chunks.front().first, "first\n");
  EXPECT_LT(chunks.front().second - t0, 400ms) << "the first line arrived before the child finished";
  EXPECT_EQ(r.stdout_data, "first\nsecond\n");
}

TEST(ChildProcess, KeptOpenStdinReachesEofOnlyWhenTheChildIsDone) {
  // `cat` would end at once on EOF; with stdin kept open it is still waiting when the timeout fires.
  auto s = spec_of({"sh", "-c", "cat >/dev/null; echo eof"});
  s.stdin_data = "data";
  s.keep_stdin_open = true;
  s.timeout = 300ms;
  auto r = run_process(s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.stdout_data, "");
  // And a child that does not read it still ends normally.
  auto t = spec_of({"sh", "-c", "echo done"});
  t.keep_stdin_open = true;
  auto d = run_process(t);
  EXPECT_EQ(d.exit_code, 0);
  EXPECT_EQ(d.stdout_data, "done\n");
}

TEST(ChildProcess, OnStartNamesTheGroupWhatItLeftBehindStaysIn) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "sleep 30 >/dev/null 2>&1 </dev/null & echo started"};
  pid_t group = 0;
  spec.on_start = [&](pid_t pgid) { group = pgid; };
  auto r = run_process(spec);
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.stdout_data, "started\n");
  ASSERT_GT(group, 0) << "on_start is called with the child's process group";
  EXPECT_EQ(::kill(-group, 0), 0) << "the background sleep is still in that group (the executor helper ends it later)";
  ::kill(-group, SIGKILL);
}
