#pragma once
// The executors of one server process (DESIGN §10): the built-in `local` (per session: its
// working directory is the session's cwd) and `openvaala`, and those of executors/*.yaml. Each
// ssh executor keeps one multiplexed connection (ControlMaster) for the whole process, opened on
// first use and closed by shutdown(); an image-mode container executor likewise one container.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/thread_pool.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/config/executor_config.hpp"
#include "runtime/protocol/executor.hpp"
#include "support/lazy_thread_pool.hpp"

namespace runtime::executors {

namespace fs = std::filesystem;

struct Deps {
  boost::asio::any_io_executor io;       // where output callbacks run
  boost::asio::thread_pool* pool = nullptr;  // blocking work (ssh, local commands)
  // Local file I/O, apart from `pool`, so that a hung mount never holds the threads turns and
  // containment checks need; null: `pool` (tests).
  std::shared_ptr<support::LazyThreadPool> file_pool = nullptr;
};

// Threads for blocking file I/O: the few reads and writes of files at once that a hung network
// mount may hold, while everything else goes on.
inline constexpr std::size_t kFileIoThreads = 4;

std::shared_ptr<Executor> make_local_executor(Deps deps, fs::path cwd);
// `prefix`: the part of the executor's paths that maps onto `root` ("" for a virtual executor,
// "/skills" for the built-in openvaala executor).
std::shared_ptr<Executor> make_virtual_executor(Deps deps, std::string id, std::string type, fs::path root,
                                                std::string prefix, bool read_only);
// `control_dir`: a private (0700) folder for the connection's socket.
std::shared_ptr<Executor> make_ssh_executor(Deps deps, config::ExecutorConfig config, fs::path control_dir);
// `container` and `devcontainer` (container_executor.cpp): through podman or docker.
std::shared_ptr<Executor> make_container_executor(Deps deps, config::ExecutorConfig config);

// What `config check --executor` reports after connecting.
struct Probe {
  bool reachable = false;
  std::string error;  // why not, naming the executor
  std::string working_directory;
  bool has_bash = false;
  bool has_tar = false;
  std::string helper;        // whether the executor helper runs there, and if not why
  double round_trip_ms = 0;  // one command over the warm connection
  double connect_ms = 0;     // the first connection
};

class Registry {
 public:
  Registry(Deps deps, fs::path builtin_skills_dir);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Takes the loaded executors/*.yaml; an executor whose file did not change keeps its connection.
  void configure(const std::map<std::string, config::ExecutorConfig>& configs);
  // nullptr when there is no such executor. `cwd`: the session's (local's working directory).
  std::shared_ptr<Executor> find(const std::string& id, const fs::path& cwd) const;
  // As find, for session `session`, which uses it from now on (until session_ended).
  std::shared_ptr<Executor> use(const std::string& id, const fs::path& cwd, const std::string& session);
  // `session` ended: the executors no other session uses now, to be released (Executor::release).
  std::vector<std::shared_ptr<Executor>> session_ended(const std::string& session);
  // Every id: local, openvaala, then executors/*.yaml by id.
  std::vector<std::string> ids() const;
  // Closes every connection (`ssh -O exit`); blocking, bounded.
  void shutdown();

 private:
  struct Entry;
  Deps deps_;
  fs::path builtin_skills_dir_;
  fs::path control_dir_;  // created on the first ssh executor
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
  std::map<std::string, std::set<std::string>> users_;  // executor id -> the sessions that use it
  std::vector<std::shared_ptr<Executor>> retired_;  // replaced on reload; closed at shutdown
  std::shared_ptr<Executor> openvaala_;
};

// Single-quoted for a POSIX shell.
std::string shell_quote(const std::string& s);

// What the ssh executor's install_file script answered: its last line is "OVSAME <absolute path>"
// (an identical file was there) or "OVNEW <absolute path>" (written); nullopt for anything else.
std::optional<InstallResult> parse_install_answer(const std::string& stdout_text);

}  // namespace runtime::executors

namespace runtime::executors {
// Connects to an ssh executor now (blocking) and reports what it found; closes the connection.
Probe probe_ssh(const config::ExecutorConfig& config, const fs::path& control_dir);
// The same for a container executor (an image-mode one is started, then removed).
Probe probe_container(const config::ExecutorConfig& config);
}  // namespace runtime::executors
