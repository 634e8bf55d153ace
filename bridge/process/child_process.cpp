#include "bridge/process/child_process.hpp"
#include "support/file_io.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "bridge/process/child_spawn.hpp"
#include "bridge/process/orphan_guard.hpp"

extern char** environ;

namespace bridge::process {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kPollSlice{50};         // how often cancel/deadline/exit are checked
constexpr milliseconds kTermGrace{500};        // SIGTERM -> SIGKILL
constexpr milliseconds kEofGraceAfterExit{200};  // child gone, a grandchild holds the pipes
constexpr milliseconds kFinalDrain{200};       // reading what is left after the group was killed

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

bool make_pipe(Fd& r, Fd& w) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return false;
  r = Fd(p[0]);
  w = Fd(p[1]);
  return true;
}

// Candidate paths for argv[0], in execvp order.
std::vector<std::string> exec_candidates(const std::string& file, const std::string& path_var) {
  if (file.find('/') != std::string::npos) return {file};
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto colon = path_var.find(':', start);
    std::string dir = path_var.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    out.push_back(dir + "/" + file);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

// Kills the process group: SIGTERM, up to kTermGrace for it to go away (reaping `pid` and
// draining the pipes meanwhile through `pump`), then SIGKILL.
template <typename Pump, typename Reap>
void kill_group(pid_t pgid, Pump&& pump, Reap&& reap) {
  ::kill(-pgid, SIGTERM);
  auto give_up = Clock::now() + kTermGrace;
  while (Clock::now() < give_up) {
    reap();
    if (::kill(-pgid, 0) != 0 && errno == ESRCH) return;
    pump(milliseconds(10));
  }
  ::kill(-pgid, SIGKILL);
}

}  // namespace

ProcessResult run_process(const ProcessSpec& spec, const std::atomic<bool>* cancel) {
  ProcessResult result;
  if (spec.argv.empty()) {
    result.spawn_error = "cannot start a process: empty argv";
    return result;
  }

  // ---- everything the child needs: argv, environment, the PATH candidates ----
  std::set<std::string> overlay_keys;
  for (const auto& [k, v] : spec.env_overlay) overlay_keys.insert(k);
  std::vector<std::string> env_strings;
  std::string path_var;
  bool path_from_overlay = false;
  for (const auto& [k, v] : spec.env_overlay) {
    if (k == "PATH") {
      path_var = v;
      path_from_overlay = true;
    }
  }
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    std::string key(entry.substr(0, eq));
    if (overlay_keys.count(key)) continue;
    if (key == "PATH" && !path_from_overlay && eq != std::string_view::npos) {
      path_var = std::string(entry.substr(eq + 1));
    }
    env_strings.emplace_back(entry);
  }
  // Later duplicates in the overlay win.
  std::map<std::string, std::string> overlay_final;
  for (const auto& [k, v] : spec.env_overlay) overlay_final[k] = v;
  for (const auto& [k, v] : spec.env_overlay) {
    auto it = overlay_final.find(k);
    if (it == overlay_final.end()) continue;
    env_strings.push_back(k + "=" + it->second);
    overlay_final.erase(it);
  }
  if (path_var.empty() && !path_from_overlay) path_var = "/usr/local/bin:/usr/bin:/bin";

  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  std::vector<std::string> argv_strings = spec.argv;
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  std::vector<std::string> candidates = exec_candidates(spec.argv[0], path_var);
  std::vector<const char*> candidate_ptrs;
  for (auto& c : candidates) candidate_ptrs.push_back(c.c_str());
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  Fd in_r, in_w, out_r, out_w, err_r, err_w;
  if (!make_pipe(in_r, in_w) || !make_pipe(out_r, out_w) || !make_pipe(err_r, err_w)) {
    result.spawn_error = "cannot create pipes: " + support::errno_text(errno);
    return result;
  }
  // The child's ends must sit above 2, so the dup2s onto 0..2 cannot clobber one another (only
  // possible when this process was started with a standard stream closed).
  for (Fd* end : {&in_r, &out_w, &err_w}) {
    if (end->get() > 2) continue;
    Fd high(::fcntl(end->get(), F_DUPFD_CLOEXEC, 3));
    if (!high.valid()) {
      result.spawn_error = "cannot set up the child's standard streams: " + support::errno_text(errno);
      return result;
    }
    *end = std::move(high);
  }

  // Block SIGPIPE in this thread while we write the child's stdin; the child gets an empty mask.
  sigset_t pipe_set, old_mask;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  sigset_t pending_before;
  sigpending(&pending_before);
  const bool sigpipe_was_pending = sigismember(&pending_before, SIGPIPE) == 1;
  bool got_epipe = false;

  const ChildSpawn child_spawn(in_r.get(), out_w.get(), spec.merge_stderr ? out_w.get() : err_w.get(), cwd);

  // execvp's search, with the error it would report: EACCES wins over a later ENOENT.
  pid_t pid = -1;
  int exec_err = ENOENT;
  bool saw_eacces = false;
  for (const char* path : candidate_ptrs) {
    // Each posix_spawn is a clone, so PATH entries that do not hold the file are skipped with a
    // cheap access() first (resolved against the child's cwd, as its execve would).
    std::string seen_from_child = (cwd && path[0] != '/') ? spec.cwd + "/" + path : path;
    if (candidate_ptrs.size() > 1 && ::access(seen_from_child.c_str(), X_OK) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
      exec_err = errno;
      continue;
    }
    exec_err = child_spawn.spawn(pid, path, argv.data(), envp.data());
    if (exec_err == 0) break;
    if (exec_err == EACCES) saw_eacces = true;
    if (exec_err != ENOENT && exec_err != EACCES && exec_err != ENOTDIR && exec_err != ESTALE &&
        exec_err != ENODEV && exec_err != ETIMEDOUT)
      break;
  }
  if (exec_err != 0) {
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    if (saw_eacces && candidate_ptrs.size() > 1 && (exec_err == ENOENT || exec_err == ENOTDIR)) exec_err = EACCES;
    // posix_spawn reports the chdir and the execve alike; a cwd we cannot enter is the cause
    // whenever there is one.
    struct stat st {};
    int cwd_err = 0;
    if (cwd && ::stat(cwd, &st) != 0) cwd_err = errno;
    else if (cwd && !S_ISDIR(st.st_mode)) cwd_err = ENOTDIR;
    else if (cwd && ::access(cwd, X_OK) != 0) cwd_err = errno;
    if (cwd_err != 0) {
      result.spawn_error = "cannot change directory to '" + spec.cwd + "': " + support::errno_text(cwd_err);
    } else {
      const bool searched = spec.argv[0].find('/') == std::string::npos;
      result.spawn_error = "cannot execute '" + spec.argv[0] + "': " + support::errno_text(exec_err);
      if (searched && exec_err == ENOENT) result.spawn_error += " (not found on PATH)";
    }
    return result;
  }

  const pid_t pgid = pid;
  guard_group(pgid);
  in_r.reset();
  out_w.reset();
  err_w.reset();
  result.started = true;

  // ---- the I/O loop ----
  ::fcntl(in_w.get(), F_SETFL, ::fcntl(in_w.get(), F_GETFL) | O_NONBLOCK);
  ::fcntl(out_r.get(), F_SETFL, ::fcntl(out_r.get(), F_GETFL) | O_NONBLOCK);
  ::fcntl(err_r.get(), F_SETFL, ::fcntl(err_r.get(), F_GETFL) | O_NONBLOCK);
  std::size_t stdin_off = 0;
  if (spec.stdin_data.empty() && !spec.keep_stdin_open) in_w.reset();

  // A pidfd becomes readable when the child exits, so the loop below wakes at the exit instead of
  // polling waitpid on a back-off (Linux >= 5.3; without it the back-off remains).
  Fd exit_fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  bool reaped = false;
  int wait_status = 0;
  auto reap = [&] {
    if (reaped) return;
    pid_t r;
    do {
      r = ::waitpid(pid, &wait_status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid || (r < 0 && errno == ECHILD)) reaped = true;
  };

  char buf[65536];
  auto read_into = [&](Fd& fd, std::string& out, bool& truncated) {
    while (fd.valid()) {
      ssize_t n = ::read(fd.get(), buf, sizeof buf);
      if (n > 0) {
        std::size_t room = spec.max_output_bytes > out.size() ? spec.max_output_bytes - out.size() : 0;
        std::size_t keep = std::min(room, static_cast<std::size_t>(n));
        out.append(buf, keep);
        if (keep < static_cast<std::size_t>(n)) truncated = true;
        if (spec.on_stdout && &fd == &out_r) spec.on_stdout(std::string_view(buf, static_cast<std::size_t>(n)));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      fd.reset();  // EOF or error
    }
  };
  auto write_stdin = [&] {
    while (in_w.valid() && stdin_off < spec.stdin_data.size()) {
      ssize_t n = ::write(in_w.get(), spec.stdin_data.data() + stdin_off,
                          spec.stdin_data.size() - stdin_off);
      if (n > 0) {
        stdin_off += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n < 0 && errno == EPIPE) got_epipe = true;
      in_w.reset();
      return;
    }
    if (in_w.valid() && stdin_off >= spec.stdin_data.size() && !spec.keep_stdin_open) in_w.reset();
  };
  // One poll over whatever is still open, then service it. Sleeps `wait` when nothing is open.
  auto pump = [&](milliseconds wait) {
    pollfd pfds[4];
    nfds_t n = 0;
    int idx_out = -1, idx_err = -1, idx_in = -1, idx_exit = -1;
    if (out_r.valid()) {
      idx_out = static_cast<int>(n);
      pfds[n++] = {out_r.get(), POLLIN, 0};
    }
    if (err_r.valid()) {
      idx_err = static_cast<int>(n);
      pfds[n++] = {err_r.get(), POLLIN, 0};
    }
    if (in_w.valid() && stdin_off < spec.stdin_data.size()) {  // a kept-open, drained stdin is not polled
      idx_in = static_cast<int>(n);
      pfds[n++] = {in_w.get(), POLLOUT, 0};
    }
    if (exit_fd.valid() && !reaped) {
      idx_exit = static_cast<int>(n);
      pfds[n++] = {exit_fd.get(), POLLIN, 0};
    }
    int r = ::poll(n ? pfds : nullptr, n, static_cast<int>(wait.count()));
    if (r <= 0) return;
    if (idx_exit >= 0 && pfds[idx_exit].revents) reap();
    if (idx_out >= 0 && pfds[idx_out].revents) read_into(out_r, result.stdout_data, result.stdout_truncated);
    if (idx_err >= 0 && pfds[idx_err].revents) read_into(err_r, result.stderr_data, result.stderr_truncated);
    if (idx_in >= 0 && pfds[idx_in].revents) {
      if (pfds[idx_in].revents & (POLLERR | POLLHUP)) {
        in_w.reset();  // the reader is gone
      } else {
        write_stdin();
      }
    }
  };

  const bool has_deadline = spec.timeout.count() > 0;
  const auto deadline = Clock::now() + spec.timeout;
  std::optional<Clock::time_point> exited_at;
  bool killed = false;
  milliseconds idle_wait{1};
  while (true) {
    if (cancel && cancel->load()) {
      result.cancelled = true;
      break;
    }
    auto now = Clock::now();
    if (has_deadline && now >= deadline) {
      result.timed_out = true;
      break;
    }
    reap();
    if (reaped && !exited_at) exited_at = now;
    if (reaped && !out_r.valid() && !err_r.valid()) break;
    if (exited_at && now - *exited_at >= kEofGraceAfterExit) break;  // a grandchild holds the pipes

    // With both pipes closed only the exit is awaited. Without a pidfd to wake us, start with
    // short sleeps so a quick child is reaped promptly, backing off to the usual slice.
    milliseconds wait = kPollSlice;
    if (!exit_fd.valid() && !out_r.valid() && !err_r.valid() && !in_w.valid()) {
      wait = std::min(kPollSlice, idle_wait);
      idle_wait = std::min(kPollSlice, idle_wait * 2);
    }
    if (has_deadline) {
      auto left = std::chrono::duration_cast<milliseconds>(deadline - now) + milliseconds(1);
      wait = std::min(wait, left);
    }
    pump(wait);
  }

  if (result.cancelled || result.timed_out || !reaped || out_r.valid() || err_r.valid()) {
    kill_group(pgid, pump, reap);
    killed = true;
  }
  in_w.reset();
  if (!reaped) {
    while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    reaped = true;
  }
  if (killed) {
    // Whatever the group wrote before it died; a process outside the group (one that called
    // setsid) may still hold a pipe, so this is bounded.
    auto until = Clock::now() + kFinalDrain;
    while ((out_r.valid() || err_r.valid()) && Clock::now() < until) pump(milliseconds(10));
  }
  out_r.reset();
  err_r.reset();
  child_reaped(pid);
  // Reaped; what the command left running in the background is the user's, as when it ends
  // normally in a shell (until the server ends: then the orphan guard ends it too).
  release_group(pgid);

  if (WIFEXITED(wait_status)) {
    result.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    result.term_signal = WTERMSIG(wait_status);
  }

  if (got_epipe && !sigpipe_was_pending) {
    timespec zero{0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return result;
}

}  // namespace bridge::process
