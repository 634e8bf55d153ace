#pragma once
// How every child process of ours is started: posix_spawn with the given descriptors as its
// stdin/stdout/stderr, an optional working directory, its own process group (so the whole tree
// can be killed), default dispositions for the signals a server ignores or handles (ignored
// dispositions survive exec) and an empty signal mask.
//
// posix_spawn, not fork: glibc starts the child with CLONE_VM | CLONE_VFORK, so a server with
// many threads and a large heap pays neither the page-table copy nor the copy-on-write faults of
// fork while the child gets to execve.
#include <spawn.h>
#include <sys/types.h>

#include <functional>

namespace bridge::process {

class ChildSpawn {
 public:
  ChildSpawn(int stdin_fd, int stdout_fd, int stderr_fd, const char* cwd);
  ~ChildSpawn();
  ChildSpawn(const ChildSpawn&) = delete;
  ChildSpawn& operator=(const ChildSpawn&) = delete;

  // posix_spawn's result: 0, or the errno of the failed chdir/execve.
  int spawn(pid_t& pid, const char* path, char* const argv[], char* const envp[]) const;

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

// Whether `pid` was started by ChildSpawn and is still its owner's to reap (the reaper of adopted
// orphans leaves those alone). `child_reaped` is called by the owner once it has reaped it.
bool spawned_child(pid_t pid);
void child_reaped(pid_t pid);
// Runs `fn` while no ChildSpawn can start a child (so a fresh child is never taken for an orphan).
void without_spawns(const std::function<void()>& fn);
// `fn` runs once, just before the first child of this process starts (what only a process with
// children needs is started there, off the start-up path).
void before_first_spawn(void (*fn)());

}  // namespace bridge::process
