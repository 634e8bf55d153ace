#include "bridge/process/orphan_guard.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "bridge/process/child_spawn.hpp"

extern char** environ;

namespace bridge::process {

namespace {

std::atomic<bool> enabled{false};
std::atomic<int> guard_fd{-1};  // write end of the pipe to the guard
std::once_flag start_once;

bool group_alive(pid_t pgid) { return ::kill(-pgid, 0) == 0 || errno == EPERM; }

void start_guard() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return;
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) {
    ::close(p[0]);
    ::close(p[1]);
    return;
  }
  // Our own argv[0], so `ps` and `pgrep` show it as part of this server. ChildSpawn puts it in
  // its own process group: a signal to ours (Ctrl-C in a terminal) must not take it first.
  pid_t pid = -1;
  std::string arg0 = program_invocation_name;
  char arg1[] = "__orphan-guard";
  char* argv[] = {arg0.data(), arg1, nullptr};
  // Not even our stderr: an editor that waits for the stream to close must not wait for it.
  const ChildSpawn spawn(p[0], devnull, devnull, nullptr);
  char self[] = "/proc/self/exe";
  const int rc = spawn.spawn(pid, self, argv, environ);
  ::close(p[0]);
  ::close(devnull);
  if (rc != 0) {
    ::close(p[1]);
    spdlog::warn("could not start the orphan guard ({}): if this server is killed, its MCP servers and commands may "
                 "outlive it", std::strerror(rc));
    return;
  }
  // Non-blocking: a guard that fell behind by 64 KB of lines must not stall a turn.
  ::fcntl(p[1], F_SETFL, ::fcntl(p[1], F_GETFL) | O_NONBLOCK);
  guard_fd.store(p[1]);
}

void tell_guard(char op, pid_t pgid) {
  if (!enabled.load(std::memory_order_relaxed) || pgid <= 0) return;
  std::call_once(start_once, start_guard);
  const int fd = guard_fd.load();
  if (fd < 0) return;
  char line[32];
  const int n = std::snprintf(line, sizeof line, "%c%d\n", op, static_cast<int>(pgid));
  // One write of fewer than PIPE_BUF bytes is atomic, so threads never interleave lines.
  while (::write(fd, line, static_cast<std::size_t>(n)) < 0 && errno == EINTR) {
  }
}

}  // namespace

void enable_orphan_guard() { enabled.store(true); }
void guard_group(pid_t pgid) { tell_guard('+', pgid); }
void release_group(pid_t pgid) { tell_guard('-', pgid); }

int run_orphan_guard(int fd, std::chrono::milliseconds grace) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_IGN);
  std::set<pid_t> groups;
  std::string pending;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the server is gone, however it went
    pending.append(buf, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (line.size() < 2) continue;
      const pid_t pgid = static_cast<pid_t>(std::atoi(line.c_str() + 1));
      if (pgid <= 1) continue;
      if (line[0] == '+') groups.insert(pgid);
      else if (line[0] == '-') groups.erase(pgid);
    }
  }
  std::set<pid_t> left;
  for (pid_t g : groups)
    if (::kill(-g, SIGTERM) == 0) left.insert(g);
  const auto give_up = std::chrono::steady_clock::now() + grace;
  while (!left.empty() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (auto it = left.begin(); it != left.end();) it = group_alive(*it) ? std::next(it) : left.erase(it);
  }
  for (pid_t g : left) ::kill(-g, SIGKILL);
  return 0;
}

}  // namespace bridge::process
