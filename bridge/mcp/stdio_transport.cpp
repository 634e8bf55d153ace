// stdio transport: the server is a child process in a new process group; one JSON-RPC message
// per line on its stdin/stdout; stderr goes to the log. Closing it closes stdin, gives the
// server 500 ms to leave, then SIGTERM and SIGKILL to the whole group: gone within a second.
// kill_now() signals the group and leaves the SIGKILL to a timer: it never blocks.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <map>

#include "support/line_framer.hpp"
#include "bridge/mcp/errors.hpp"
#include "support/json_rpc.hpp"
#include "bridge/mcp/jsonrpc.hpp"
#include "bridge/process/process_groups.hpp"
#include "bridge/mcp/transport.hpp"
#include "bridge/process/child_spawn.hpp"
#include "support/run_blocking.hpp"
#include "support/text.hpp"

extern char** environ;

namespace bridge::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::posix::stream_descriptor;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

namespace {

constexpr std::size_t kMaxLine = 64 * 1024 * 1024;

// Lines from the shared framer (CR stripped, blank lines skipped, oversized lines dropped),
// collected per read so the reading coroutine can act on them.
struct LineCollector : support::LineFramer::Sink {
  std::vector<std::string> lines;
  std::size_t oversized = 0;
  void on_line(std::string&& line) override { lines.push_back(std::move(line)); }
  void on_oversized_line(std::size_t) override { ++oversized; }
  std::vector<std::string> take() {
    oversized = 0;
    return std::exchange(lines, {});
  }
};
constexpr std::chrono::milliseconds kStdinGrace{500};
constexpr std::chrono::milliseconds kTermGrace{400};
// After kill_now() or a crash: SIGTERM, then SIGKILL to what is left of the group.
constexpr std::chrono::milliseconds kKillGrace{100};

std::string find_executable(const std::string& file, const std::string& path_var) {
  if (file.find('/') != std::string::npos) return file;
  std::size_t start = 0;
  while (true) {
    auto colon = path_var.find(':', start);
    std::string dir = path_var.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + file;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return {};
}

struct Spawned {
  pid_t pid = -1;
  int in = -1, out = -1, err = -1;
  int exit_fd = -1;  // a pidfd: readable once the server exits (-1 where the kernel has none)
};

Spawned spawn_server(const StdioSpec& spec) {
  std::map<std::string, std::string> overlay;
  for (const auto& [k, v] : spec.env) overlay[k] = v;
  std::vector<std::string> env_strings;
  std::string path_var = "/usr/local/bin:/usr/bin:/bin";
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    std::string key(entry.substr(0, eq));
    if (overlay.count(key)) continue;
    if (key == "PATH" && eq != std::string_view::npos) path_var = std::string(entry.substr(eq + 1));
    env_strings.emplace_back(entry);
  }
  for (const auto& [k, v] : overlay) {
    if (k == "PATH") path_var = v;
    env_strings.push_back(k + "=" + v);
  }
  std::string exe = find_executable(spec.command, path_var);
  if (exe.empty()) throw McpError(McpError::Kind::Transport, "command not found: " + spec.command);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{spec.command};
  argv_strings.insert(argv_strings.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  int in_p[2], out_p[2], err_p[2];
  if (::pipe2(in_p, O_CLOEXEC) != 0) throw McpError(McpError::Kind::Transport, std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out_p, O_CLOEXEC) != 0) {
    ::close(in_p[0]), ::close(in_p[1]);
    throw McpError(McpError::Kind::Transport, std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(err_p, O_CLOEXEC) != 0) {
    for (int fd : {in_p[0], in_p[1], out_p[0], out_p[1]}) ::close(fd);
    throw McpError(McpError::Kind::Transport, std::string("pipe: ") + std::strerror(errno));
  }
  pid_t pid = -1;
  int rc = process::ChildSpawn(in_p[0], out_p[1], err_p[1], spec.cwd.empty() ? nullptr : spec.cwd.c_str())
               .spawn(pid, exe.c_str(), argv.data(), envp.data());
  ::close(in_p[0]);
  ::close(out_p[1]);
  ::close(err_p[1]);
  if (rc != 0) {
    ::close(in_p[1]);
    ::close(out_p[0]);
    ::close(err_p[0]);
    std::string what = std::strerror(rc);
    if (rc == ENOENT && !spec.cwd.empty()) what += " (command " + exe + ", cwd " + spec.cwd + ")";
    throw McpError(McpError::Kind::Transport, "cannot start " + spec.command + ": " + what);
  }
  // Opened before anyone can reap it, so it always names our server.
  const int exit_fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  return {pid, in_p[1], out_p[0], err_p[0], exit_fd};
}

class StdioTransport : public Transport {
 public:
  StdioTransport(asio::any_io_executor ex, StdioSpec spec, std::string log_id, asio::thread_pool* spawn_pool)
      : ex_(ex), spec_(std::move(spec)), log_id_(std::move(log_id)), spawn_pool_(spawn_pool), in_(ex), out_(ex),
        err_(ex), exit_(ex), wake_(ex) {}
  ~StdioTransport() override { kill_now(); }

  asio::awaitable<void> start(Handlers handlers, std::chrono::milliseconds) override {
    handlers_ = std::move(handlers);
    auto self = std::static_pointer_cast<StdioTransport>(shared_from_this());
    // Registered where it is spawned, so the way out ends it even if the io thread never
    // hears of it.
    auto spawn = [spec = spec_] {
      Spawned s = spawn_server(spec);
      process::register_process_group(s.pid, s.in);
      return s;
    };
    Spawned s;
    if (spawn_pool_) s = co_await support::run_blocking(*spawn_pool_, std::move(spawn));
    else s = spawn();
    if (stopped_) {  // killed while it was being spawned
      process::forget_group_input(s.pid);
      for (int fd : {s.in, s.out, s.err, s.exit_fd})
        if (fd >= 0) ::close(fd);
      process::end_process_group(ex_, s.pid, kKillGrace);
      throw McpError(McpError::Kind::Closed, "stopped while starting");
    }
    pid_ = s.pid;
    in_.assign(s.in);
    out_.assign(s.out);
    err_.assign(s.err);
    in_.non_blocking(true);
    out_.non_blocking(true);
    err_.non_blocking(true);
    if (s.exit_fd >= 0) exit_.assign(s.exit_fd);
    spdlog::debug("mcp {}: started {} (pid {})", log_id_, spec_.command, pid_);
    asio::co_spawn(ex_, [self]() { return self->read_stdout(); }, asio::detached);
    asio::co_spawn(ex_, [self]() { return self->read_stderr(); }, asio::detached);
    asio::co_spawn(ex_, [self]() { return self->write_loop(); }, asio::detached);
    if (exit_.is_open()) asio::co_spawn(ex_, [self]() { return self->watch_exit(); }, asio::detached);
    co_return;
  }

  void send(json::object message) override {
    if (stopped_ || !in_.is_open()) {
      if (support::json_rpc::is_request(message) && handlers_.on_message)
        deliver(error_response(message.at("id"), -32000, "the MCP server process is not running"));
      return;
    }
    std::string line = json::serialize(message);
    support::repair_utf8(line);  // a tool argument may hold bytes that are not UTF-8
    queue_.push_back(std::move(line) + "\n");
    wake_.cancel();
  }

  asio::awaitable<void> close() override {
    if (stopped_) co_return;
    stopped_ = true;
    handlers_ = {};
    wake_.cancel();
    boost::system::error_code ec;
    // The group this close ends. kill_now() (the server shutting down) may take it over while we
    // wait; it ends the group itself then, and pid_ is -1 from then on: a signal or waitpid for
    // "-1" would reach every process we may signal and reap any child of ours.
    const pid_t pid = pid_;
    if (pid > 0) process::forget_group_input(pid);
    in_.close(ec);
    if (pid > 0) {
      auto self = shared_from_this();
      auto taken_over = [&] { return pid_ != pid; };
      asio::steady_timer t(ex_);
      auto wait_gone = [&](std::chrono::milliseconds limit) -> asio::awaitable<bool> {
        const auto until = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < until) {
          if (taken_over() || process::process_group_gone(pid)) co_return true;
          t.expires_after(std::chrono::milliseconds(10));
          co_await t.async_wait(kTuple);
        }
        co_return taken_over() || process::process_group_gone(pid);
      };
      bool gone = co_await wait_gone(kStdinGrace);
      if (!gone) {
        spdlog::debug("mcp {}: still running 500 ms after stdin closed; SIGTERM", log_id_);
        ::kill(-pid, SIGTERM);
        gone = co_await wait_gone(kTermGrace);
      }
      if (!gone) {
        spdlog::warn("mcp {}: SIGKILL to process group {}", log_id_, pid);
        ::kill(-pid, SIGKILL);
        co_await wait_gone(std::chrono::milliseconds(100));
      }
      if (!taken_over()) {
        process::unregister_process_group(pid);
        pid_ = -1;
      }
    }
    out_.close(ec);
    err_.close(ec);
    exit_.close(ec);
  }

  void kill_now() override {
    stopped_ = true;
    handlers_ = {};
    boost::system::error_code ec;
    if (pid_ > 0) process::forget_group_input(pid_);
    in_.close(ec);
    out_.close(ec);
    err_.close(ec);
    exit_.close(ec);
    wake_.cancel();
    const pid_t group = std::exchange(pid_, -1);
    process::end_process_group(ex_, group, kKillGrace);
  }

  std::string describe() const override { return "stdio " + spec_.command; }

 private:
  void deliver(json::object msg) {
    // Posted, so a reply synthesized inside send() never re-enters the caller.
    auto self = std::static_pointer_cast<StdioTransport>(shared_from_this());
    asio::post(ex_, [self, msg = std::move(msg)]() mutable {
      if (auto h = self->handlers_.on_message) h(std::move(msg));
    });
  }

  asio::awaitable<void> write_loop() {
    auto self = shared_from_this();
    while (!stopped_) {
      if (queue_.empty()) {
        wake_.expires_at(asio::steady_timer::time_point::max());
        co_await wake_.async_wait(kTuple);
        continue;
      }
      std::string data = std::move(queue_.front());
      queue_.pop_front();
      auto [ec, n] = co_await asio::async_write(in_, asio::buffer(data), kTuple);
      if (ec) {
        if (!stopped_) spdlog::debug("mcp {}: writing to the server failed: {}", log_id_, ec.message());
        break;  // the reader sees EOF and reports the exit
      }
    }
  }

  asio::awaitable<void> read_stdout() {
    auto self = shared_from_this();
    LineCollector lines;
    support::LineFramer framer(lines, kMaxLine);
    std::array<char, 65536> chunk;
    while (true) {
      auto [ec, n] = co_await out_.async_read_some(asio::buffer(chunk), kTuple);
      if (stopped_) co_return;
      if (ec) break;
      framer.feed(std::string_view(chunk.data(), n));
      if (lines.oversized) spdlog::warn("mcp {}: dropped a line over {} bytes", log_id_, kMaxLine);
      for (auto& line : lines.take()) {
        for (auto& m : parse_messages(line, log_id_)) {
          if (stopped_ || !handlers_.on_message) co_return;
          auto handler = handlers_.on_message;
          handler(std::move(m));
        }
      }
    }
    co_await report_exit();
  }

  // The server's own exit, even while something it started still holds its stdout open (a
  // helper in its group that ignores SIGTERM): its calls fail now, not at their timeout.
  asio::awaitable<void> watch_exit() {
    auto self = shared_from_this();
    auto [ec] = co_await exit_.async_wait(stream_descriptor::wait_read, kTuple);
    if (ec || stopped_) co_return;
    // What it wrote before it left is in the pipe: the reader passes it on first (a last answer
    // may be megabytes), for at most two seconds.
    asio::steady_timer t(ex_);
    for (int i = 0; i < 200 && !stopped_ && out_.is_open(); ++i) {
      t.expires_after(std::chrono::milliseconds(10));
      co_await t.async_wait(kTuple);
      int unread = 0;
      if (!out_.is_open() || ::ioctl(out_.native_handle(), FIONREAD, &unread) != 0 || unread == 0) break;
    }
    co_await report_exit();
  }

  asio::awaitable<void> report_exit() {
    // The server exited, or closed its stdout. Collect the exit status briefly. Reached from the
    // reader's EOF and from the exit watcher; the first one reports.
    if (exit_reported_) co_return;
    exit_reported_ = true;
    std::string reason = "the server closed its output";
    asio::steady_timer t(ex_);
    for (int i = 0; i < 50 && pid_ > 0; ++i) {
      int st = 0;
      pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        process::child_reaped(pid_);
        if (WIFEXITED(st)) reason = "the server exited with code " + std::to_string(WEXITSTATUS(st));
        else if (WIFSIGNALED(st)) reason = "the server was killed by signal " + std::to_string(WTERMSIG(st));
        break;
      }
      if (r < 0) break;
      t.expires_after(std::chrono::milliseconds(10));
      co_await t.async_wait(kTuple);
      if (stopped_) co_return;
    }
    // Its last words on stderr say why it left; they may still be in the pipe (bounded: a
    // grandchild may hold stderr open).
    for (int i = 0; i < 20 && !stderr_done_ && !stopped_; ++i) {
      t.expires_after(std::chrono::milliseconds(10));
      co_await t.async_wait(kTuple);
    }
    if (!last_stderr_.empty()) reason += " (stderr: " + last_stderr_ + ")";
    if (stopped_) co_return;
    auto handlers = std::move(handlers_);
    handlers_ = {};
    stopped_ = true;
    wake_.cancel();
    process::end_process_group(ex_, std::exchange(pid_, -1), kKillGrace);  // whatever it left in its group
    if (handlers.on_closed) handlers.on_closed(reason);
  }

  asio::awaitable<void> read_stderr() {
    auto self = shared_from_this();
    LineCollector lines;
    support::LineFramer framer(lines, 64 * 1024);
    std::array<char, 8192> chunk;
    while (true) {
      auto [ec, n] = co_await err_.async_read_some(asio::buffer(chunk), kTuple);
      if (ec) break;
      framer.feed(std::string_view(chunk.data(), n));
      for (auto& line : lines.take()) {
        spdlog::debug("mcp {} stderr: {}", log_id_, line.substr(0, 2000));
        last_stderr_ = line.substr(0, 300);
      }
    }
    stderr_done_ = true;
  }

  asio::any_io_executor ex_;
  StdioSpec spec_;
  std::string log_id_;
  asio::thread_pool* spawn_pool_;
  stream_descriptor in_, out_, err_, exit_;
  asio::steady_timer wake_;
  std::deque<std::string> queue_;
  Handlers handlers_;
  pid_t pid_ = -1;
  bool stopped_ = false;
  std::string last_stderr_;
  bool stderr_done_ = false;
  bool exit_reported_ = false;
};

}  // namespace

std::shared_ptr<Transport> make_stdio_transport(asio::any_io_executor ex, StdioSpec spec, std::string log_id,
                                                asio::thread_pool* spawn_pool) {
  return std::make_shared<StdioTransport>(std::move(ex), std::move(spec), std::move(log_id), spawn_pool);
}

}  // namespace bridge::mcp
