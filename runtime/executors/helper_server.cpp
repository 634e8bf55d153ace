// `openvaala executor-helper` (helper_protocol.hpp): the far side of a remote executor's channel.
// The main thread reads requests; each file operation runs on a thread of its own (a hung mount
// holds that request only), each command on a thread that runs it with bridge::process::
// run_process (its own process group, ended on a kill request), streams its output and reports
// its exit. Replies share stdout under one lock.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "bridge/process/child_process.hpp"
#include "runtime/executors/helper_protocol.hpp"
#include "runtime/protocol/executor.hpp"

namespace runtime::executors::helper {

namespace {

namespace fs = std::filesystem;

// A failed operation: its message is the reply (e.g. "No such file or directory").
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail_errno(int e) { throw Failure(std::strerror(e)); }

class Replies {
 public:
  explicit Replies(int fd) : fd_(fd) {}
  void send(std::uint32_t id, char kind, std::string_view payload = {}) {
    const std::string bytes = encode(Frame{id, kind, std::string(payload)});
    std::lock_guard lock(mu_);
    for (std::size_t at = 0; at < bytes.size();) {
      const ssize_t n = ::write(fd_, bytes.data() + at, bytes.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the channel is gone: the end of stdin follows
      at += static_cast<std::size_t>(n);
    }
  }

 private:
  std::mutex mu_;
  int fd_;
};

// The commands running (their stop flags, run_process's cancel) and every process group started:
// what a command left in the background stays in its group until the helper ends it.
class Commands {
 public:
  std::shared_ptr<std::atomic<bool>> add(std::uint32_t id) {
    auto stop = std::make_shared<std::atomic<bool>>(false);
    std::lock_guard lock(mu_);
    running_[id] = stop;
    return stop;
  }
  void started(pid_t pgid) {
    std::lock_guard lock(mu_);
    groups_.insert(pgid);
  }
  void done(std::uint32_t id) {
    std::lock_guard lock(mu_);
    running_.erase(id);
  }
  // run_process ends its group: SIGTERM, then SIGKILL.
  void stop(std::uint32_t id) {
    std::lock_guard lock(mu_);
    if (auto it = running_.find(id); it != running_.end()) it->second->store(true);
  }
  // Every command stopped, then SIGTERM to every group still there (the background children of
  // finished commands too), SIGKILL to what is left after a second.
  void end_all() {
    std::set<pid_t> groups;
    {
      std::lock_guard lock(mu_);
      for (auto& [_, stop] : running_) stop->store(true);
      groups = groups_;
    }
    for (pid_t g : groups) ::kill(-g, SIGTERM);
    for (int i = 0; i < 20 && any_alive(groups); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (pid_t g : groups) ::kill(-g, SIGKILL);
  }

 private:
  static bool any_alive(const std::set<pid_t>& groups) {
    for (pid_t g : groups) {
      while (::waitpid(-g, nullptr, WNOHANG) > 0) {
      }
      if (::kill(-g, 0) == 0) return true;
    }
    return false;
  }
  std::mutex mu_;
  std::map<std::uint32_t, std::shared_ptr<std::atomic<bool>>> running_;
  std::set<pid_t> groups_;
};

std::string read_regular(const std::string& path) {
  // O_NONBLOCK: a FIFO must not hold the request until someone writes to it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail_errno(errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Failure("it is not a regular file");
  }
  std::string content;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      fail_errno(e);
    }
    if (n == 0) break;
    content.append(buf, static_cast<std::size_t>(n));
    if (content.size() > kMaxReadFileBytes) {
      ::close(fd);
      throw Failure("it is larger than " + std::to_string(kMaxReadFileBytes >> 20) + " MiB");
    }
  }
  ::close(fd);
  return content;
}

void write_all(int fd, std::string_view data) {
  for (std::size_t at = 0; at < data.size();) {
    const ssize_t n = ::write(fd, data.data() + at, data.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno(errno);
    at += static_cast<std::size_t>(n);
  }
}

// Atomic: a temp file beside the target with the target's mode (or the umask's), then rename(2).
void write_atomically(const std::string& path, std::string_view content, mode_t umask_bits) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Failure(ec.message());
  struct stat st {};
  const mode_t mode = ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : (0666 & ~umask_bits);
  std::string temp = (dir / ".openvaala.XXXXXX").string();
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) fail_errno(errno);
  try {
    if (::fchmod(fd, mode) != 0) fail_errno(errno);
    write_all(fd, content);
    if (::close(fd) != 0) {
      const int e = errno;
      ::unlink(temp.c_str());
      fail_errno(e);
    }
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    fail_errno(e);
  }
}

std::string stat_answer(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "n";
  if (S_ISDIR(st.st_mode)) return "d";
  std::string out = "f";
  const auto size = static_cast<std::uint64_t>(st.st_size);
  put_u32(out, static_cast<std::uint32_t>(size >> 32));
  put_u32(out, static_cast<std::uint32_t>(size));
  return out;
}

// realpath -m of each path, then of the config root there: the very command the per-operation
// scripts run, so containment judges the same names whether the helper runs or not.
std::string real_paths(PayloadReader& in) {
  bridge::process::ProcessSpec spec;
  spec.argv = {"realpath", "-m", "-z", "--"};
  for (std::uint32_t n = in.u32(); n > 0; --n) spec.argv.push_back(in.string());
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  spec.argv.push_back((xdg && *xdg ? std::string(xdg) : std::string(home ? home : "") + "/.config") + "/openvaala");
  spec.max_output_bytes = 1024 * 1024;
  const auto r = bridge::process::run_process(spec);
  if (!r.started) throw Failure("cannot run realpath: " + r.spawn_error);
  if (r.exit_code != 0) {
    std::string why = r.stderr_data;
    while (!why.empty() && why.back() == '\n') why.pop_back();
    throw Failure(why.empty() ? "realpath failed" : why.substr(why.rfind('\n') + 1));
  }
  return r.stdout_data;
}

class Helper : public std::enable_shared_from_this<Helper> {
 public:
  explicit Helper(int out_fd) : replies_(out_fd) {
    umask_ = ::umask(0);
    ::umask(umask_);
  }

  void hello() { replies_.send(0, kHello, kHelloText); }

  // The threads hold the helper: serve() may return while one is stuck on a hung mount.
  void dispatch(Frame f) {
    if (f.kind == kKill) return commands_.stop(f.id);
    if (f.kind == kSpawn) return std::thread([self = shared_from_this(), f = std::move(f)] { self->run_command(f); }).detach();
    std::thread([self = shared_from_this(), f = std::move(f)] { self->file_operation(f); }).detach();
  }

  void end() { commands_.end_all(); }

 private:
  void file_operation(const Frame& f) {
    try {
      PayloadReader in(f.payload);
      switch (f.kind) {
        case kRead: return replies_.send(f.id, kOk, read_regular(in.string()));
        case kWrite: {
          const std::string path = in.string();
          write_atomically(path, in.rest(), umask_);
          return replies_.send(f.id, kOk);
        }
        case kRemove:
          if (::unlink(in.string().c_str()) != 0) fail_errno(errno);
          return replies_.send(f.id, kOk);
        case kStat: return replies_.send(f.id, kOk, stat_answer(in.string()));
        case kRealPaths: return replies_.send(f.id, kOk, real_paths(in));
        default: throw Failure(std::string("unknown request '") + f.kind + "'");
      }
    } catch (const std::exception& e) {
      replies_.send(f.id, kError, e.what());
    }
  }

  // bash -c COMMAND in its own process group (run_process), stderr into stdout, the output sent
  // as it comes.
  void run_command(const Frame& f) {
    bridge::process::ProcessSpec spec;
    try {
      spec.argv = {"bash", "-c", PayloadReader(f.payload).string()};
    } catch (const std::exception& e) {
      return replies_.send(f.id, kError, e.what());
    }
    spec.merge_stderr = true;
    spec.max_output_bytes = 0;  // sent, not kept
    spec.on_stdout = [&](std::string_view chunk) { replies_.send(f.id, kOutput, chunk); };
    spec.on_start = [this](pid_t pgid) { commands_.started(pgid); };
    const auto stop = commands_.add(f.id);
    const auto r = bridge::process::run_process(spec, stop.get());
    commands_.done(f.id);
    if (!r.started) return replies_.send(f.id, kError, "cannot start bash: " + r.spawn_error);
    std::string exit;
    put_u32(exit, static_cast<std::uint32_t>(r.exit_code.value_or(-1)));
    put_u32(exit, static_cast<std::uint32_t>(r.term_signal.value_or(-1)));
    replies_.send(f.id, kExit, exit);
  }

  Replies replies_;
  Commands commands_;
  mode_t umask_ = 022;
};

}  // namespace

int serve(int in_fd, int out_fd) {
  ::signal(SIGPIPE, SIG_IGN);
  auto helper = std::make_shared<Helper>(out_fd);
  helper->hello();
  FrameReader reader;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(in_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reader.add(std::string_view(buf, static_cast<std::size_t>(n)));
    try {
      while (auto f = reader.next()) helper->dispatch(std::move(*f));
    } catch (const std::exception&) {
      break;  // not our client: stop as if the channel had closed
    }
  }
  helper->end();
  return 0;
}

}  // namespace runtime::executors::helper
