#pragma once
// The process groups of the MCP servers we spawned, so they can all be killed on the way out
// even when the io_context no longer runs. Thread-safe.
#include <sys/types.h>

#include <chrono>

namespace bridge::mcp {

void register_process_group(pid_t pgid);
void unregister_process_group(pid_t pgid);
// SIGTERM to the group, up to `grace` for it to go away (reaping the leader), then SIGKILL.
// Blocking. Returns true when the group was gone before SIGKILL.
bool terminate_process_group(pid_t pgid, std::chrono::milliseconds grace);
// Non-blocking: reaps the leader if it exited; true when the whole group is gone.
bool process_group_gone(pid_t pgid);

}  // namespace bridge::mcp
