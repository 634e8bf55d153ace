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

#include "bridge/process/child_command.hpp"
#include "bridge/process/child_spawn.hpp"
#include "bridge/process/orphan_guard.hpp"

namespace bridge::process {

namespace {

using detail::ChildCommand;
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

// The three pipes: the child's ends (in_r, out_w, err_w) and ours (in_w, out_r, err_r).
struct ChildPipes {
  Fd in_r, in_w, out_r, out_w, err_r, err_w;

  // Empty on success, else why they could not be set up.
  std::string open() {
    if (!make_pipe(in_r, in_w) || !make_pipe(out_r, out_w) || !make_pipe(err_r, err_w)) {
      return "cannot create pipes: " + support::errno_text(errno);
    }
    // The child's ends must sit above 2, so the dup2s onto 0..2 cannot clobber one another (only
    // possible when this process was started with a standard stream closed).
    for (Fd* end : {&in_r, &out_w, &err_w}) {
      if (end->get() > 2) continue;
      Fd high(::fcntl(end->get(), F_DUPFD_CLOEXEC, 3));
      if (!high.valid()) return "cannot set up the child's standard streams: " + support::errno_text(errno);
      *end = std::move(high);
    }
    return {};
  }
  void close_child_ends() {
    in_r.reset();
    out_w.reset();
    err_w.reset();
  }
};

// SIGPIPE blocked in this thread while we write the child's stdin (the child gets an empty
// mask); the old mask comes back when this ends.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_set_);
    sigaddset(&pipe_set_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set_, &old_mask_);
    sigset_t pending_before;
    sigpending(&pending_before);
    was_pending_ = sigismember(&pending_before, SIGPIPE) == 1;
  }
  ~SigpipeBlock() { pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr); }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

  // Takes the SIGPIPE our own write raised (`got_epipe`), unless one was pending before.
  void discard_own(bool got_epipe) {
    if (!got_epipe || was_pending_) return;
    timespec zero{0, 0};
    while (sigtimedwait(&pipe_set_, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }

 private:
  sigset_t pipe_set_{}, old_mask_{};
  bool was_pending_ = false;
};

// execvp's search, with the error it would report: EACCES wins over a later ENOENT. Returns 0
// with `pid` set, or that errno.
int spawn_on_path(const ProcessSpec& spec, const ChildCommand& command, const ChildPipes& pipes, pid_t& pid) {
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  const ChildSpawn child_spawn(pipes.in_r.get(), pipes.out_w.get(),
                               spec.merge_stderr ? pipes.out_w.get() : pipes.err_w.get(), cwd);
  const auto& candidates = command.candidates();
  int exec_err = ENOENT;
  bool saw_eacces = false;
  for (const auto& candidate : candidates) {
    const char* path = candidate.c_str();
    // Each posix_spawn is a clone, so PATH entries that do not hold the file are skipped with a
    // cheap access() first (resolved against the child's cwd, as its execve would).
    std::string seen_from_child = (cwd && path[0] != '/') ? spec.cwd + "/" + path : path;
    if (candidates.size() > 1 && ::access(seen_from_child.c_str(), X_OK) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
      exec_err = errno;
      continue;
    }
    exec_err = child_spawn.spawn(pid, path, command.argv(), command.envp());
    if (exec_err == 0) break;
    if (exec_err == EACCES) saw_eacces = true;
    if (exec_err != ENOENT && exec_err != EACCES && exec_err != ENOTDIR && exec_err != ESTALE &&
        exec_err != ENODEV && exec_err != ETIMEDOUT)
      break;
  }
  if (exec_err != 0 && saw_eacces && candidates.size() > 1 && (exec_err == ENOENT || exec_err == ENOTDIR)) {
    exec_err = EACCES;
  }
  return exec_err;
}

// Why the child did not start. posix_spawn reports the chdir and the execve alike; a cwd we
// cannot enter is the cause whenever there is one.
std::string spawn_error_text(const ProcessSpec& spec, int exec_err) {
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  struct stat st {};
  int cwd_err = 0;
  if (cwd && ::stat(cwd, &st) != 0) cwd_err = errno;
  else if (cwd && !S_ISDIR(st.st_mode)) cwd_err = ENOTDIR;
  else if (cwd && ::access(cwd, X_OK) != 0) cwd_err = errno;
  if (cwd_err != 0) return "cannot change directory to '" + spec.cwd + "': " + support::errno_text(cwd_err);
  const bool searched = spec.argv[0].find('/') == std::string::npos;
  std::string text = "cannot execute '" + spec.argv[0] + "': " + support::errno_text(exec_err);
  if (searched && exec_err == ENOENT) text += " (not found on PATH)";
  return text;
}

void set_nonblocking(const Fd& fd) { ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK); }

// A started child and our ends of its pipes: feeds stdin, captures stdout/stderr into `result`,
// and waits for the exit, the deadline or the cancel flag.
class RunningChild {
 public:
  RunningChild(const ProcessSpec& spec, pid_t pid, ChildPipes& pipes, ProcessResult& result)
      : spec_(spec),
        pid_(pid),
        result_(result),
        in_w_(std::move(pipes.in_w)),
        out_r_(std::move(pipes.out_r)),
        err_r_(std::move(pipes.err_r)),
        // A pidfd becomes readable when the child exits, so the loop wakes at the exit instead
        // of polling waitpid on a back-off (Linux >= 5.3; without it the back-off remains).
        exit_fd_(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))) {
    set_nonblocking(in_w_);
    set_nonblocking(out_r_);
    set_nonblocking(err_r_);
    if (spec_.stdin_data.empty() && !spec_.keep_stdin_open) in_w_.reset();
  }

  void wait(const std::atomic<bool>* cancel);
  void wind_down();
  int wait_status() const { return wait_status_; }
  bool got_epipe() const { return got_epipe_; }

 private:
  void reap();
  void read_into(Fd& fd, std::string& out, bool& truncated);
  void write_stdin();
  void pump(milliseconds wait);
  milliseconds next_wait(Clock::time_point now, std::optional<Clock::time_point> deadline);

  const ProcessSpec& spec_;
  const pid_t pid_;
  ProcessResult& result_;
  Fd in_w_, out_r_, err_r_;
  Fd exit_fd_;
  std::size_t stdin_off_ = 0;
  bool got_epipe_ = false;
  bool reaped_ = false;
  int wait_status_ = 0;
  milliseconds idle_wait_{1};
  char buf_[65536];
};

void RunningChild::reap() {
  if (reaped_) return;
  pid_t r;
  do {
    r = ::waitpid(pid_, &wait_status_, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_ || (r < 0 && errno == ECHILD)) reaped_ = true;
}

void RunningChild::read_into(Fd& fd, std::string& out, bool& truncated) {
  while (fd.valid()) {
    ssize_t n = ::read(fd.get(), buf_, sizeof buf_);
    if (n > 0) {
      std::size_t room = spec_.max_output_bytes > out.size() ? spec_.max_output_bytes - out.size() : 0;
      std::size_t keep = std::min(room, static_cast<std::size_t>(n));
      out.append(buf_, keep);
      if (keep < static_cast<std::size_t>(n)) truncated = true;
      if (spec_.on_stdout && &fd == &out_r_) spec_.on_stdout(std::string_view(buf_, static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    fd.reset();  // EOF or error
  }
}

void RunningChild::write_stdin() {
  while (in_w_.valid() && stdin_off_ < spec_.stdin_data.size()) {
    ssize_t n = ::write(in_w_.get(), spec_.stdin_data.data() + stdin_off_, spec_.stdin_data.size() - stdin_off_);
    if (n > 0) {
      stdin_off_ += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && errno == EPIPE) got_epipe_ = true;
    in_w_.reset();
    return;
  }
  if (in_w_.valid() && stdin_off_ >= spec_.stdin_data.size() && !spec_.keep_stdin_open) in_w_.reset();
}

// One poll over whatever is still open, then service it. Sleeps `wait` when nothing is open.
void RunningChild::pump(milliseconds wait) {
  pollfd pfds[4];
  nfds_t n = 0;
  int idx_out = -1, idx_err = -1, idx_in = -1, idx_exit = -1;
  auto watch = [&](int& idx, const Fd& fd, short events) {
    idx = static_cast<int>(n);
    pfds[n++] = {fd.get(), events, 0};
  };
  if (out_r_.valid()) watch(idx_out, out_r_, POLLIN);
  if (err_r_.valid()) watch(idx_err, err_r_, POLLIN);
  // A kept-open, drained stdin is not polled.
  if (in_w_.valid() && stdin_off_ < spec_.stdin_data.size()) watch(idx_in, in_w_, POLLOUT);
  if (exit_fd_.valid() && !reaped_) watch(idx_exit, exit_fd_, POLLIN);
  int r = ::poll(n ? pfds : nullptr, n, static_cast<int>(wait.count()));
  if (r <= 0) return;
  if (idx_exit >= 0 && pfds[idx_exit].revents) reap();
  if (idx_out >= 0 && pfds[idx_out].revents) read_into(out_r_, result_.stdout_data, result_.stdout_truncated);
  if (idx_err >= 0 && pfds[idx_err].revents) read_into(err_r_, result_.stderr_data, result_.stderr_truncated);
  if (idx_in >= 0 && pfds[idx_in].revents) {
    if (pfds[idx_in].revents & (POLLERR | POLLHUP)) {
      in_w_.reset();  // the reader is gone
    } else {
      write_stdin();
    }
  }
}

// How long the next poll may sleep. With both pipes closed only the exit is awaited: without a
// pidfd to wake us, start with short sleeps so a quick child is reaped promptly, backing off to
// the usual slice.
milliseconds RunningChild::next_wait(Clock::time_point now, std::optional<Clock::time_point> deadline) {
  milliseconds wait = kPollSlice;
  if (!exit_fd_.valid() && !out_r_.valid() && !err_r_.valid() && !in_w_.valid()) {
    wait = std::min(kPollSlice, idle_wait_);
    idle_wait_ = std::min(kPollSlice, idle_wait_ * 2);
  }
  if (deadline) {
    auto left = std::chrono::duration_cast<milliseconds>(*deadline - now) + milliseconds(1);
    wait = std::min(wait, left);
  }
  return wait;
}

// Until the child has exited and its pipes are closed (or a grandchild holds them past the
// grace), the deadline passes or `cancel` is set.
void RunningChild::wait(const std::atomic<bool>* cancel) {
  std::optional<Clock::time_point> deadline;
  if (spec_.timeout.count() > 0) deadline = Clock::now() + spec_.timeout;
  std::optional<Clock::time_point> exited_at;
  while (true) {
    if (cancel && cancel->load()) {
      result_.cancelled = true;
      return;
    }
    auto now = Clock::now();
    if (deadline && now >= *deadline) {
      result_.timed_out = true;
      return;
    }
    reap();
    if (reaped_ && !exited_at) exited_at = now;
    if (reaped_ && !out_r_.valid() && !err_r_.valid()) return;
    if (exited_at && now - *exited_at >= kEofGraceAfterExit) return;  // a grandchild holds the pipes
    pump(next_wait(now, deadline));
  }
}

// Kills the group when anything of it may still run, reaps the child and drains what is left.
void RunningChild::wind_down() {
  bool killed = false;
  if (result_.cancelled || result_.timed_out || !reaped_ || out_r_.valid() || err_r_.valid()) {
    kill_group(pid_, [this](milliseconds w) { pump(w); }, [this] { reap(); });
    killed = true;
  }
  in_w_.reset();
  if (!reaped_) {
    while (::waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  if (killed) {
    // Whatever the group wrote before it died; a process outside the group (one that called
    // setsid) may still hold a pipe, so this is bounded.
    auto until = Clock::now() + kFinalDrain;
    while ((out_r_.valid() || err_r_.valid()) && Clock::now() < until) pump(milliseconds(10));
  }
  out_r_.reset();
  err_r_.reset();
}

void record_exit(int wait_status, ProcessResult& result) {
  if (WIFEXITED(wait_status)) {
    result.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    result.term_signal = WTERMSIG(wait_status);
  }
}

}  // namespace

ProcessResult run_process(const ProcessSpec& spec, const std::atomic<bool>* cancel) {
  ProcessResult result;
  if (spec.argv.empty()) {
    result.spawn_error = "cannot start a process: empty argv";
    return result;
  }
  const ChildCommand command(spec);
  ChildPipes pipes;
  if (auto error = pipes.open(); !error.empty()) {
    result.spawn_error = std::move(error);
    return result;
  }
  SigpipeBlock sigpipe;
  pid_t pid = -1;
  if (int exec_err = spawn_on_path(spec, command, pipes, pid); exec_err != 0) {
    result.spawn_error = spawn_error_text(spec, exec_err);
    return result;
  }
  const pid_t pgid = pid;
  guard_group(pgid);
  pipes.close_child_ends();
  result.started = true;
  if (spec.on_start) spec.on_start(pgid);

  RunningChild child(spec, pid, pipes, result);
  child.wait(cancel);
  child.wind_down();
  child_reaped(pid);
  // Reaped; what the command left running in the background is the user's, as when it ends
  // normally in a shell (until the server ends: then the orphan guard ends it too).
  release_group(pgid);
  record_exit(child.wait_status(), result);
  sigpipe.discard_own(child.got_epipe());
  return result;
}

}  // namespace bridge::process
