#include "bridge/process/orphan_guard.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <map>

#include "bridge/process/child_spawn.hpp"
#include "bridge/process/process_tree.hpp"

extern char** environ;

namespace bridge::process {

namespace {

std::atomic<bool> enabled{false};
std::atomic<int> guard_fd{-1};  // our end of the socket to the guard
std::once_flag start_once;

bool group_alive(pid_t pgid) { return ::kill(-pgid, 0) == 0 || errno == EPERM; }

void start_guard() {
  // A socket, not a pipe: the way out hands the guard our ends of the servers' stdin (SCM_RIGHTS).
  int p[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0) return;
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
  std::string arg2 = std::to_string(::getpid());  // whose process tree to watch
  char* argv[] = {arg0.data(), arg1, arg2.data(), nullptr};
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

void tell_guard(const std::string& line) {
  if (!enabled.load(std::memory_order_relaxed)) return;
  std::call_once(start_once, start_guard);
  const int fd = guard_fd.load();
  if (fd < 0) return;
  // A short write to a stream socket goes out as one piece, so threads never interleave lines.
  while (::write(fd, line.data(), line.size()) < 0 && errno == EINTR) {
  }
}

void tell_guard(char op, pid_t pgid) {
  if (pgid > 0) tell_guard(op + std::to_string(pgid) + "\n");
}

bool one_line(const std::string& s) { return s.find_first_of("\t\n") == std::string::npos; }

// Adopted orphans that exit would stay zombies of ours: reap them, and only them.
void reap_adopted_orphans() {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    without_spawns([] {
      for (pid_t c : children_of(::getpid())) {
        if (spawned_child(c)) continue;
        int st = 0;
        ::waitpid(c, &st, WNOHANG);
      }
    });
  }
}

}  // namespace

bool hand_inputs_to_guard(const std::vector<int>& fds) { return hand_inputs_over(guard_fd.load(), fds); }

bool hand_inputs_over(int fd, const std::vector<int>& fds) {
  if (fd < 0) return false;
  // The kernel passes at most 253 descriptors a message; each message is one "<\n" line.
  constexpr std::size_t kPerMessage = 250;
  for (std::size_t at = 0; at < fds.size(); at += kPerMessage) {
    const std::size_t n = std::min(kPerMessage, fds.size() - at);
    char line[] = "<\n";
    iovec iov{line, 2};
    std::vector<char> control(CMSG_SPACE(n * sizeof(int)));
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data() + at, n * sizeof(int));
    // Our end is non-blocking: a guard 64 KB behind would refuse; then we signal ourselves.
    ssize_t sent;
    while ((sent = ::sendmsg(fd, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    if (sent != 2) return false;
  }
  return true;
}

void enable_orphan_guard() {
  enabled.store(true);
  // What a child of ours detaches is re-parented to us, not to init: the guard sees it. Orphans
  // can only come from our children, so their reaper starts with the first child, not at start-up.
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0)
    before_first_spawn([] { std::thread(reap_adopted_orphans).detach(); });
}

void guard_group(pid_t pgid) { tell_guard('+', pgid); }
void release_group(pid_t pgid) { tell_guard('-', pgid); }
void run_at_exit(const std::string& key, const std::string& command_line) {
  if (one_line(key) && one_line(command_line)) tell_guard("!" + key + "\t" + command_line + "\n");
}
void forget_at_exit(const std::string& key) {
  if (one_line(key)) tell_guard("?" + key + "\n");
}
bool orphan_guard_running() { return guard_fd.load() >= 0; }

namespace {

using Seen = std::map<pid_t, StartTime>;

// Reads the guard's socket: false at EOF (the server is gone, however it went). Descriptors
// that come with it (the servers' stdin, handed over on the way out) are kept in `inputs`.
// What the guard was told: the groups to end and the commands to run after.
struct GuardList {
  std::set<pid_t> groups;
  std::map<std::string, std::string> at_exit;  // key -> command line

  void apply(const std::string& line) {
    if (line.size() < 2) return;
    if (line[0] == '!') {
      const auto tab = line.find('\t');
      if (tab != std::string::npos) at_exit[line.substr(1, tab - 1)] = line.substr(tab + 1);
      return;
    }
    if (line[0] == '?') {
      at_exit.erase(line.substr(1));
      return;
    }
    const pid_t pgid = static_cast<pid_t>(std::atoi(line.c_str() + 1));
    if (pgid <= 1) return;
    if (line[0] == '+') groups.insert(pgid);
    else if (line[0] == '-') groups.erase(pgid);
  }
};

bool read_list(int fd, std::string& pending, GuardList& list, std::vector<int>& inputs) {
  char buf[4096];
  alignas(cmsghdr) char control[CMSG_SPACE(253 * sizeof(int))];
  iovec iov{buf, sizeof buf};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno == ENOTSOCK) {  // a pipe (the guard's own tests): lines only
    msg.msg_controllen = 0;
    do {
      n = ::read(fd, buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
  }
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); n >= 0 && c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const auto* received = reinterpret_cast<const int*>(CMSG_DATA(c));
    inputs.insert(inputs.end(), received, received + count);
  }
  if (n <= 0) return false;
  pending.append(buf, static_cast<std::size_t>(n));
  for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
    list.apply(pending.substr(0, nl));
    pending.erase(0, nl + 1);
  }
  return true;
}

// Every process of `seen` still running, after adding the children they started since.
std::vector<pid_t> running(Seen& seen) {
  Seen known = seen;
  for (const auto& [pid, start] : known)
    if (still_running(pid, start)) add_descendants(pid, seen, ::getpid());
  std::vector<pid_t> out;
  for (const auto& [pid, start] : seen)
    if (still_running(pid, start)) out.push_back(pid);
  return out;
}

// SIGTERM to the groups and the processes seen, SIGKILL to what is left after `grace`.
void end_everything(const std::set<pid_t>& groups, Seen& seen, std::chrono::milliseconds grace) {
  std::set<pid_t> left;
  for (pid_t g : groups)
    if (::kill(-g, SIGTERM) == 0) left.insert(g);
  for (pid_t p : running(seen)) ::kill(p, SIGTERM);
  const auto give_up = std::chrono::steady_clock::now() + grace;
  std::vector<pid_t> procs = running(seen);
  while ((!left.empty() || !procs.empty()) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (auto it = left.begin(); it != left.end();) it = group_alive(*it) ? std::next(it) : left.erase(it);
    procs = running(seen);  // also catches what they started while ending
  }
  for (pid_t g : left) ::kill(-g, SIGKILL);
  for (pid_t p : running(seen)) ::kill(p, SIGKILL);
}

}  // namespace

int run_orphan_guard(int fd, std::chrono::milliseconds grace, pid_t server) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_IGN);
  // Readable once the server has exited (its parent can see it): see below.
  const int server_exit = server > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, server, 0)) : -1;
  GuardList list;
  Seen seen;  // every process seen in the server's tree
  std::string pending;
  std::vector<int> inputs;  // the servers' stdin, handed over by the server on its way out
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    const int r = ::poll(&pfd, 1, server > 0 ? 100 : -1);
    if (r < 0 && errno != EINTR) break;
    if (server > 0) add_descendants(server, seen, ::getpid());
    if (r > 0 && !read_list(fd, pending, list, inputs)) break;
  }
  // Our socket ends before the server's exit is complete: give it that moment (at most 100 ms),
  // so the editor sees the exit before the servers start reacting to theirs.
  if (server_exit >= 0 && !inputs.empty()) {
    pollfd pfd{server_exit, POLLIN, 0};
    while (::poll(&pfd, 1, 100) < 0 && errno == EINTR) {
    }
  }
  for (int input : inputs) ::close(input);  // the end of their stdin: MCP's way to ask them to exit
  end_everything(list.groups, seen, grace);
  // Our stdout and stderr are /dev/null; each command is the caller's to bound (podman rm -t 0).
  for (const auto& [_, command] : list.at_exit) (void)std::system(command.c_str());
  return 0;
}

}  // namespace bridge::process
