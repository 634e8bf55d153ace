#pragma once
// Nothing we start may outlive us, even when we are killed with SIGKILL (an editor dropping its
// agent, the OOM killer, a crash): then no code of ours runs, and the children we put in their
// own process groups (MCP servers, local commands, hooks) would be orphaned.
//
// So `openvaala acp` starts a guard: a small process of our own binary whose stdin is a socket
// from us. We tell it each process group we start and end ("+<pgid>\n", "-<pgid>\n"); when the
// socket reaches EOF, which the kernel guarantees however we die, it sends SIGTERM to the groups
// still listed, SIGKILL to what is left after a grace period, and exits.
//
// A process that left its group (`setsid`, a double-forked daemon) is not in any group we know.
// For those the server is a child subreaper (PR_SET_CHILD_SUBREAPER): whatever a child of ours
// detaches is re-parented to the server, never to init, so it stays in the server's process
// tree; the guard looks at that tree every 100 ms and, when the server is gone, ends every
// process it saw there (and their children), as it ends the groups. Left: a process that is
// started, detached and whose parent exited within the last 100 ms before the server died.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace bridge::process {

// Turns the guard on for this process (`openvaala acp`; other commands and tests leave it off).
// It is started (`<self> __orphan-guard`) by the first guard_group call, so a server that never
// starts a process pays nothing and start-up is not slowed down. Also makes this process a child
// subreaper, with a thread (started with the first child) that reaps the adopted orphans that
// exit (not our own children: their owners reap those).
void enable_orphan_guard();
// Tell the guard about a process group we started / that has ended. No-ops while the guard is
// off or could not be started (that is logged once).
void guard_group(pid_t pgid);
void release_group(pid_t pgid);
// A command line (sh -c) the guard runs once we are gone, after ending the groups: what no
// process group of ours holds, such as a container started for this server (`podman rm -f …`).
// `key` names it for forget_at_exit (no tab or newline in either). No-ops while the guard is off.
void run_at_exit(const std::string& key, const std::string& command_line);
void forget_at_exit(const std::string& key);
// The guard was started and will end the groups still listed when we exit.
bool orphan_guard_running();
// On the way out: gives the guard these descriptors (our ends of the servers' stdin). It keeps
// them open until we are gone, then closes them before it signals the groups. False if the guard
// is not running or did not take them.
bool hand_inputs_to_guard(const std::vector<int>& fds);
// The same to the guard listening on `guard_socket` (tests).
bool hand_inputs_over(int guard_socket, const std::vector<int>& fds);

// The guard itself: reads the list from `fd` until EOF, then ends the groups still listed and,
// when `server` is a pid, every process seen in its tree. Signals that would stop it early
// (SIGINT, SIGTERM, SIGHUP) are ignored: it has to outlive us.
int run_orphan_guard(int fd, std::chrono::milliseconds grace = std::chrono::milliseconds(500), pid_t server = 0);

}  // namespace bridge::process
