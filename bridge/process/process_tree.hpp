#pragma once
// Reading the process tree from /proc (Linux): a process's children and its start time, which
// tells it apart from a later process that got the same pid.
#include <sys/types.h>

#include <map>
#include <vector>

namespace bridge::process {

using StartTime = unsigned long long;  // clock ticks since boot; 0 = no such process

StartTime start_time(pid_t pid);
// The children of every thread of `pid` (/proc/<pid>/task/*/children).
std::vector<pid_t> children_of(pid_t pid);
// Adds every descendant of `root` (not `root` itself, nor `skip`) with its start time to `seen`.
void add_descendants(pid_t root, std::map<pid_t, StartTime>& seen, pid_t skip);
// Whether the process recorded with `start` is still alive (and not a zombie).
bool still_running(pid_t pid, StartTime start);

}  // namespace bridge::process
