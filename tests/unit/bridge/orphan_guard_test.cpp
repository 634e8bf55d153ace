#include "bridge/process/orphan_guard.hpp"
#include "bridge/process/process_tree.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <signal.h>
#include <spawn.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>

using namespace std::chrono_literals;

extern char** environ;

namespace {

// `sleep 100` leading its own process group, as the server starts its children.
pid_t start_group() {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  char a0[] = "sleep", a1[] = "100";
  char* argv[] = {a0, a1, nullptr};
  pid_t pid = -1;
  EXPECT_EQ(posix_spawnp(&pid, "sleep", nullptr, &attr, argv, environ), 0);
  posix_spawnattr_destroy(&attr);
  return pid;
}

// The group is gone once its leader was reaped (we are its parent here).
bool group_ends_within(pid_t pgid, std::chrono::milliseconds limit) {
  for (auto until = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < until;) {
    int st = 0;
    if (::waitpid(pgid, &st, WNOHANG) == pgid) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

void say(int fd, const std::string& line) { ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size())); }

// Runs the guard in a child process (it ignores SIGTERM and friends, which must not leak into
// this test binary); returns its pid and the write end of its pipe.
std::pair<pid_t, int> fork_guard(std::chrono::milliseconds grace, pid_t server = 0) {
  int p[2];
  EXPECT_EQ(::pipe(p), 0);
  const pid_t guard = ::fork();
  if (guard == 0) {
    ::close(p[1]);
    ::_exit(bridge::process::run_orphan_guard(p[0], grace, server));
  }
  ::close(p[0]);
  return {guard, p[1]};
}

// The same on a socket, as the server starts it (descriptors can be handed over on it).
std::pair<pid_t, int> fork_guard_on_socket(std::chrono::milliseconds grace) {
  int p[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, p), 0);
  const pid_t guard = ::fork();
  if (guard == 0) {
    ::close(p[1]);
    ::_exit(bridge::process::run_orphan_guard(p[0], grace, 0));
  }
  ::close(p[0]);
  return {guard, p[1]};
}

bool exits_cleanly(pid_t pid) {
  int st = 0;
  return ::waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

}  // namespace

// The guard ends, at EOF of its pipe, the groups still listed, and only those: the pipe closes
// however the server dies, so this is the SIGKILL path.
TEST(OrphanGuard, EndsTheGroupsStillListedWhenThePipeCloses) {
  const pid_t listed = start_group(), released = start_group();
  auto [guard, fd] = fork_guard(200ms);
  ASSERT_GT(guard, 0);
  say(fd, "+" + std::to_string(listed) + "\n+" + std::to_string(released) + "\n");
  say(fd, "-" + std::to_string(released) + "\ngarbage\n+1\n");  // nonsense and init are ignored
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(::kill(-listed, 0), 0) << "nothing happens while the server lives";
  ::close(fd);

  EXPECT_TRUE(group_ends_within(listed, 3s)) << "the listed group was not ended";
  EXPECT_TRUE(exits_cleanly(guard));
  EXPECT_EQ(::kill(-released, 0), 0) << "a released group is not the guard's to end";
  ::kill(-released, SIGKILL);
  int st = 0;
  ::waitpid(released, &st, 0);
}

// A group that ignores SIGTERM is killed after the grace period.
TEST(OrphanGuard, KillsWhatIgnoresSigterm) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  char a0[] = "sh", a1[] = "-c", a2[] = "trap '' TERM; sleep 100 & wait";
  char* argv[] = {a0, a1, a2, nullptr};
  pid_t stubborn = -1;
  ASSERT_EQ(posix_spawnp(&stubborn, "sh", nullptr, &attr, argv, environ), 0);
  posix_spawnattr_destroy(&attr);
  std::this_thread::sleep_for(100ms);  // the trap is set
  auto [guard, fd] = fork_guard(150ms);
  ASSERT_GT(guard, 0);
  say(fd, "+" + std::to_string(stubborn) + "\n");
  const auto t0 = std::chrono::steady_clock::now();
  ::close(fd);
  EXPECT_TRUE(exits_cleanly(guard));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 150ms) << "SIGTERM was given its grace period";
  EXPECT_TRUE(group_ends_within(stubborn, 2s));
}

// A stand-in server: a child subreaper (as `openvaala acp` is) that starts a command which
// detaches a `sleep` with setsid and exits, then waits to be killed.
pid_t start_server_with_detached_sleep() {
  const pid_t server = ::fork();
  if (server == 0) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (std::system("setsid sleep 100 >/dev/null 2>&1 </dev/null &") != 0) ::_exit(1);
    for (;;) ::pause();
  }
  return server;
}

// What a child of the server detached (a new session, its parent gone) is in no group the guard
// was told of; the guard finds it in the server's tree and ends it when the server dies by SIGKILL.
TEST(OrphanGuard, EndsWhatTheServersChildrenDetachedWhenTheServerIsKilled) {
  const pid_t server = start_server_with_detached_sleep();
  ASSERT_GT(server, 0);
  // The server's child that is `sleep`: adopted once the shell is gone. (Under load the first
  // child seen can still be std::system's own shell, which is about to exit.)
  auto is_sleep = [](pid_t pid) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    return name == "sleep";
  };
  pid_t detached = 0;
  for (int i = 0; i < 500 && !detached; ++i) {
    std::this_thread::sleep_for(10ms);
    for (pid_t c : bridge::process::children_of(server))
      if (is_sleep(c)) detached = c;
  }
  ASSERT_GT(detached, 0) << "set-up: the detached sleep was not adopted by the server";
  const auto started = bridge::process::start_time(detached);
  auto [guard, fd] = fork_guard(200ms, server);
  ASSERT_GT(guard, 0);
  std::this_thread::sleep_for(300ms);  // the guard looks every 100 ms
  ASSERT_TRUE(bridge::process::still_running(detached, started)) << "nothing happens while the server lives";
  ::kill(server, SIGKILL);
  int st = 0;
  ::waitpid(server, &st, 0);
  ::close(fd);  // as the kernel closes the server's end when it dies
  EXPECT_TRUE(exits_cleanly(guard));
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = !bridge::process::still_running(detached, started);
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone) << "the process the server's child detached outlived the server";
  if (!gone) ::kill(detached, SIGKILL);
}

// On the way out the server hands the guard its ends of the MCP servers' stdin, so that they do
// not see the end of their input (and start exiting, taking the CPU) while the server exits: the
// guard keeps them open while the server lives and closes them once it is gone.
TEST(OrphanGuard, KeepsTheHandedInputsOpenWhileTheServerLivesAndClosesThemWhenItIsGone) {
  auto [guard, fd] = fork_guard_on_socket(200ms);
  ASSERT_GT(guard, 0);
  int input[2];  // a server's stdin: it reads input[0], we hold input[1]; made after the fork, so
  ASSERT_EQ(::pipe(input), 0);  // the guard's only copy is the one handed to it
  ASSERT_TRUE(bridge::process::hand_inputs_over(fd, {input[1]})) << "the guard must take the descriptors";
  ::close(input[1]);  // the server's own copy goes as it exits
  pollfd p{input[0], POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 300), 0) << "while the server lives, the guard keeps the server's stdin open (no EOF)";
  ::close(fd);  // the server is gone
  p.revents = 0;
  ASSERT_EQ(::poll(&p, 1, 3000), 1) << "once the server is gone, the guard must close the stdin it was handed";
  char c;
  EXPECT_EQ(::read(input[0], &c, 1), 0) << "the MCP server sees the end of its input";
  ::close(input[0]);
  EXPECT_TRUE(exits_cleanly(guard));
}
