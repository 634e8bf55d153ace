#pragma once
// The process groups of long-lived children (the MCP servers we spawned), so they can all be
// killed on the way out even when the io_context no longer runs. Each is also given to the
// orphan guard. Thread-safe.
#include <sys/types.h>

#include <boost/asio/any_io_executor.hpp>
#include <chrono>

namespace bridge::process {

// `input_fd`: our end of the group leader's stdin, if it has one we keep open (an MCP server's);
// see end_all_process_groups_on_exit. Call forget_group_input before closing it.
void register_process_group(pid_t pgid, int input_fd = -1);
void forget_group_input(pid_t pgid);
void unregister_process_group(pid_t pgid);
// Non-blocking: reaps the leader if it exited; true when the whole group is gone.
bool process_group_gone(pid_t pgid);

// SIGTERM to the group now, SIGKILL after `grace` to whatever is left, then unregisters it. Never
// blocks: the waiting is a timer on `ex`, so many groups ended at once share one grace period.
// If `ex` stops first, the group stays registered and the way out (or the orphan guard) ends it.
void end_process_group(boost::asio::any_io_executor ex, pid_t pgid, std::chrono::milliseconds grace);

// Kills every registered process group that is still alive (SIGTERM, a short grace, SIGKILL).
// Synchronous and safe when the io_context is no longer running: call it on the way out (stdin
// EOF, SIGTERM) so no server outlives the agent.
void kill_all_process_groups(std::chrono::milliseconds grace = std::chrono::milliseconds(300));
// The way out of `openvaala acp`. When the orphan guard runs, the groups' inputs are handed to it
// and it ends them once we are gone: the end of their stdin, SIGTERM, its grace period, SIGKILL.
// So the servers do not wake up while we exit (an MCP server reacting to stdin EOF, 100 of them
// on two cores, took the CPU our exit needed), and we exit at once. Without the guard,
// kill_all_process_groups().
void end_all_process_groups_on_exit();

}  // namespace bridge::process
