#include "bridge/process/child_spawn.hpp"

#include <signal.h>

#include <atomic>
#include <initializer_list>
#include <mutex>
#include <set>

namespace bridge::process {

namespace {
std::mutex& spawn_mutex() {
  static std::mutex m;
  return m;
}
std::set<pid_t>& spawned() {
  static std::set<pid_t> s;
  return s;
}

std::atomic<void (*)()> first_spawn_hook{nullptr};
std::once_flag first_spawn_once;
}  // namespace

void before_first_spawn(void (*fn)()) { first_spawn_hook.store(fn); }

bool spawned_child(pid_t pid) { return spawned().count(pid) > 0; }  // under without_spawns

void child_reaped(pid_t pid) {
  std::lock_guard lock(spawn_mutex());
  spawned().erase(pid);
}

void without_spawns(const std::function<void()>& fn) {
  std::lock_guard lock(spawn_mutex());
  fn();
}

ChildSpawn::ChildSpawn(int stdin_fd, int stdout_fd, int stderr_fd, const char* cwd) {
  posix_spawn_file_actions_init(&actions_);
  posix_spawn_file_actions_adddup2(&actions_, stdin_fd, 0);  // dup2 clears FD_CLOEXEC
  posix_spawn_file_actions_adddup2(&actions_, stdout_fd, 1);
  posix_spawn_file_actions_adddup2(&actions_, stderr_fd, 2);
  if (cwd) posix_spawn_file_actions_addchdir_np(&actions_, cwd);
  posix_spawnattr_init(&attr_);
  posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr_, 0);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr_, &defaults);
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr_, &empty);
}

ChildSpawn::~ChildSpawn() {
  posix_spawn_file_actions_destroy(&actions_);
  posix_spawnattr_destroy(&attr_);
}

int ChildSpawn::spawn(pid_t& pid, const char* path, char* const argv[], char* const envp[]) const {
  if (auto* hook = first_spawn_hook.load()) std::call_once(first_spawn_once, hook);
  std::lock_guard lock(spawn_mutex());
  const int rc = ::posix_spawn(&pid, path, &actions_, &attr_, argv, envp);
  if (rc == 0) spawned().insert(pid);
  return rc;
}

}  // namespace bridge::process
