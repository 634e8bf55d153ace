#pragma once
// A place where files are read and written and processes run (DESIGN §10): `local`, an `ssh`
// host, a `virtual` folder, the built-in read-only `openvaala`. Tools reach an executor only
// through this interface, so another kind (docker exec, kubectl exec) is one more implementation.
// Paths are absolute on the executor, or relative to its working directory.
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/cancellation.hpp"
#include "support/file_io.hpp"

namespace runtime {

// Something the executor could not do; the message names the executor and says why
// ("executor 'devbox' (ssh me@devbox): cannot connect: Connection refused").
struct ExecutorError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ExecutorInfo {
  std::string id;
  std::string type;     // "local" | "ssh" | "virtual" | "builtin"
  std::string where;    // ssh: [user@]host[:port]; virtual: its local folder; else empty
  bool can_run = false;     // processes (bash, hooks, MCP servers)
  bool read_only = false;
  std::string workdir;      // as configured (`~/src` on ssh until connected); relative paths start here
};

struct FileInfo {
  bool exists = false;
  bool is_directory = false;
  std::uint64_t size = 0;
};

struct RunRequest {
  std::string command;  // given to `bash -c`, in the working directory
  // The argv that runs `bash -c` (the sandbox helper's, CommandSandbox::prefix); local only.
  std::vector<std::string> wrapper;
  std::chrono::milliseconds timeout{0};
  std::size_t max_output_bytes = 64 * 1024;
  // Output (stdout and stderr as they come), called on the caller's executor while it runs.
  std::function<void(std::string_view)> on_output;
  // Called once when the command runs in a terminal the editor shows (its output is there, live).
  std::function<void(const std::string& terminal_id)> on_terminal;
};

struct RunResult {
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool timed_out = false;
  std::string output;  // stdout and stderr interleaved, the last max_output_bytes
  bool truncated = false;
  std::string signal_name;  // the editor's terminal names the signal ("SIGKILL") instead
  std::string terminal_id;  // not empty: the editor's terminal that showed it run
};

struct InstallResult {
  std::string path;  // absolute there
  bool written = false;  // false: an identical file (content and mode) was there already
};

using EnvList = std::vector<std::pair<std::string, std::string>>;

// The most read_file (the executor's) reads of one file: a file for apply_patch to edit, an
// AGENTS.md; larger ones are refused rather than held in memory.
inline constexpr std::size_t kMaxReadFileBytes = 64 * 1024 * 1024;

class Executor {
 public:
  virtual ~Executor() = default;
  virtual const ExecutorInfo& info() const = 0;
  // Connects on first use (ssh) and answers the absolute working directory there. Throws
  // ExecutorError when the executor cannot be reached.
  virtual boost::asio::awaitable<std::string> working_directory(support::CancelSource* cancel) = 0;
  // Each throws ExecutorError (a missing file included) naming the executor.
  virtual boost::asio::awaitable<std::string> read_file(const std::string& path, support::CancelSource* cancel) = 0;
  // A window of a text file's lines (the read_file tool), reading no more of it than the window
  // needs where the executor can; `stopped` when cancelled. This default reads the whole file.
  virtual boost::asio::awaitable<support::WindowRead> read_lines(const std::string& path, support::LineWindow window,
                                                                 support::CancelSource* cancel);
  // Atomic where the file lives: readers see the old or the new content, never a part.
  virtual boost::asio::awaitable<void> write_file(const std::string& path, const std::string& content,
                                                  support::CancelSource* cancel) = 0;
  virtual boost::asio::awaitable<void> remove_file(const std::string& path, support::CancelSource* cancel) = 0;
  virtual boost::asio::awaitable<FileInfo> stat(const std::string& path, support::CancelSource* cancel) = 0;
  // Runs `bash -c` there; cancelling ends it and everything it started. Throws ExecutorError when
  // it cannot start (or the connection dropped), never for a non-zero exit.
  virtual boost::asio::awaitable<RunResult> run(RunRequest request, support::CancelSource* cancel) = 0;
  // The argv of a local process that runs `command_line` (given to bash -c) there, in its working
  // directory, with its env and `env` added, stdin, stdout and stderr its own (hooks, stdio MCP
  // servers). Connect first (working_directory). Throws ExecutorError when it runs no processes
  // there this way (local runs them itself).
  virtual std::vector<std::string> launch_argv(const std::string& command_line, const EnvList& env) const;
  // Puts a file there (`~/x` is in its home) with this content and mode, atomically, unless it
  // holds both already (DESIGN §10: hook scripts are copied only when content or mode changed).
  virtual boost::asio::awaitable<InstallResult> install_file(const std::string& path, const std::string& content,
                                                            unsigned mode, support::CancelSource* cancel);
  // Copies the local folder `from` to `to` there (`~/x` in its home) with tar, unless `to`
  // exists already (its name carries a hash of the content); answers its absolute path.
  virtual boost::asio::awaitable<std::string> copy_tree(const std::string& from, const std::string& to,
                                                       support::CancelSource* cancel);
  // A local address ("127.0.0.1:<port>") whose connections are made to `host`:`port` from that
  // machine (an http/sse MCP server "connected from that machine"); one per destination, kept
  // until shutdown. Throws ExecutorError where connections cannot be forwarded.
  virtual boost::asio::awaitable<std::string> forward_tcp(const std::string& host, const std::string& port,
                                                          support::CancelSource* cancel);
  // What this executor is, for the model's system prompt: "id (type, where), working directory …".
  virtual std::string describe() const;
  // The server is ending: close connections now (blocking, bounded).
  virtual void shutdown() {}
  // No session uses it any more: what was started for them goes (an image-mode container is
  // removed); the next use starts afresh. A connection that is only kept (ssh) stays.
  virtual boost::asio::awaitable<void> release() { co_return; }
  // Something the user should hear once about this executor (it works, but slower than it could:
  // the helper cannot run there, and why); empty afterwards.
  virtual std::optional<std::string> take_notice() { return std::nullopt; }
  // Whether another process opens the files this executor reads (`writes` false) or writes: the
  // editor's fs/* does, and there /proc/self/… or /dev/fd/… name other files than the ones judged.
  virtual bool opens_elsewhere(bool /*writes*/) const { return false; }
};

inline std::vector<std::string> Executor::launch_argv(const std::string&, const EnvList&) const {
  throw ExecutorError("executor '" + info().id + "' cannot run processes (" +
                      (info().can_run ? "it runs them itself" : "it has files only") + ")");
}

inline boost::asio::awaitable<support::WindowRead> Executor::read_lines(const std::string& path,
                                                                       support::LineWindow window,
                                                                       support::CancelSource* cancel) {
  const std::string text = co_await read_file(path, cancel);
  co_return support::window_of_text(text, window);
}

inline boost::asio::awaitable<InstallResult> Executor::install_file(const std::string&, const std::string&, unsigned,
                                                                    support::CancelSource*) {
  throw ExecutorError("executor '" + info().id + "' cannot hold copied files (it has files only)");
  co_return InstallResult{};
}

inline boost::asio::awaitable<std::string> Executor::copy_tree(const std::string&, const std::string&,
                                                               support::CancelSource*) {
  throw ExecutorError("executor '" + info().id + "' cannot hold copied folders (it has files only)");
  co_return std::string();
}

inline boost::asio::awaitable<std::string> Executor::forward_tcp(const std::string&, const std::string&,
                                                                 support::CancelSource*) {
  throw ExecutorError("executor '" + info().id + "' cannot connect to servers from there (" + info().type + ")");
  co_return std::string();
}

inline std::string Executor::describe() const {
  const auto& i = info();
  std::string s = i.id + " (" + i.type + (i.where.empty() || i.type == "builtin" ? "" : ", " + i.where) + ")";
  if (!i.can_run) s += ", files only";
  if (i.read_only) s += ", read-only";
  return s + ", working directory " + i.workdir;
}

}  // namespace runtime
