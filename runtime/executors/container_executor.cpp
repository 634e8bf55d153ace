// `container` and `devcontainer`: a container, through its engine's own CLI (DESIGN §10):
// `podman exec -i` / `docker exec -i` carries each operation's script. With `container:` it
// execs into that running container; with `image:` (and every devcontainer) it starts one for
// this server on first use, whose main process only keeps it up, and removes it when the server
// ends: shutdown() on the way out, the orphan guard after a crash or a SIGKILL.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <random>

#include "bridge/process/orphan_guard.hpp"
#include "runtime/executors/executors.hpp"
#include "runtime/executors/remote_shell_executor.hpp"

namespace runtime::executors {

namespace {

// The first line of what the engine said, for a message.
std::string first_line(const std::string& s) {
  const auto start = s.find_first_not_of("\r\n");
  if (start == std::string::npos) return {};
  return s.substr(start, s.find_first_of("\r\n", start) - start);
}

// How podman ("no such container", "no such object") and docker ("No such container", "No such
// object") say that the name is unknown.
bool no_such_container(const std::string& stderr_text) {
  std::string lower = stderr_text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("no such container") != std::string::npos || lower.find("no such object") != std::string::npos;
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t at = 0; at <= dirs.size();) {
    const auto end = std::min(dirs.find(':', at), dirs.size());
    const std::string dir = dirs.substr(at, end - at);
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    at = end + 1;
  }
  return false;
}

std::string random_suffix() {
  std::random_device random;
  char s[9];
  std::snprintf(s, sizeof s, "%08x", static_cast<unsigned>(random()));
  return s;
}

class ContainerChannel : public Channel {
 public:
  explicit ContainerChannel(config::ExecutorConfig c) : c_(std::move(c)) {
    engine_ = c_.engine.empty() ? (on_path("podman") || !on_path("docker") ? "podman" : "docker") : c_.engine;
    name_ = c_.image.empty() ? c_.container : "openvaala-" + c_.id + "-" + std::to_string(::getpid()) + "-" + random_suffix();
  }

  std::string type() const override { return c_.type == config::ExecutorConfig::Type::Devcontainer ? "devcontainer" : "container"; }
  std::string where() const override { return engine_ + " " + (c_.image.empty() ? c_.container : c_.image); }
  std::vector<std::string> argv(const std::string& command_line) const override {
    std::vector<std::string> a{engine_, "exec", "-i"};
    if (c_.user) a.insert(a.end(), {"-u", *c_.user});
    a.insert(a.end(), {name_, "sh", "-c", command_line});
    return a;
  }
  // The engine's own failures exit 125-127 with its "Error…" line; a script's do not say that.
  std::optional<std::string> failure(const bridge::process::ProcessResult& r) const override {
    const int code = r.exit_code.value_or(0);
    if (!r.started || code < 125 || code > 127 || r.stderr_data.rfind("Error", 0) != 0) return std::nullopt;
    return "the container '" + name_ + "' cannot run commands (" + engine_ + ": " + first_line(r.stderr_data) + ")";
  }
  // Also after a lost channel: a container of ours that is still up is used again; one that is
  // gone or stopped is replaced.
  std::string open(const std::atomic<bool>* cancel) override {
    if (!on_path(engine_)) return "the container engine '" + engine_ + "' is not installed (not found on PATH)";
    if (c_.image.empty()) return check_running(cancel);
    if (started_ && check_running(cancel).empty()) return {};
    close();
    return start(cancel);
  }
  bool started_for_use() const override { return !c_.image.empty(); }
  void close() override {
    if (c_.image.empty() || !started_) return;
    started_ = false;
    bridge::process::ProcessSpec spec;
    spec.argv = remove_argv();
    spec.timeout = std::chrono::milliseconds(10'000);
    auto r = bridge::process::run_process(spec);
    bridge::process::forget_at_exit(name_);
    spdlog::info("executor {}: container {} removed ({})", c_.id, name_, r.exit_code.value_or(-1));
  }

 private:
  std::vector<std::string> remove_argv() const {
    if (engine_ == "podman") return {engine_, "rm", "-f", "-t", "0", name_};
    return {engine_, "rm", "-f", name_};
  }

  std::string check_running(const std::atomic<bool>* cancel) const {
    bridge::process::ProcessSpec spec;
    spec.argv = {engine_, "container", "inspect", "-f", "{{.State.Running}}", name_};
    spec.timeout = std::chrono::milliseconds(30'000);
    auto r = bridge::process::run_process(spec, cancel);
    if (!r.started) return "cannot start " + engine_ + ": " + r.spawn_error;
    if (r.exit_code != 0 && no_such_container(r.stderr_data))
      return "the container '" + name_ + "' does not exist (" + engine_ + ": " + first_line(r.stderr_data) + ")";
    if (r.exit_code != 0)  // docker without its daemon, podman that cannot read its storage, ...
      return "the container engine '" + engine_ + "' cannot be used (" + engine_ + ": " + first_line(r.stderr_data) + ")";
    if (first_line(r.stdout_data) != "true")
      return "the container '" + name_ + "' is not running (start it with `" + engine_ + " start " + name_ + "`)";
    return {};
  }

  // Starts the container: its main process sleeps; the orphan guard is told to remove it first,
  // so that no moment exists when it could outlive us unannounced.
  std::string start(const std::atomic<bool>* cancel) {
    bridge::process::run_at_exit(name_, shell_words(remove_argv()));
    bridge::process::ProcessSpec spec;
    // --init: an init as PID 1 reaps what the commands orphan and lets `rm` stop it at once.
    spec.argv = {engine_, "run", "-d", "--init", "--rm", "--name", name_, "--label", "openvaala.server=" + std::to_string(::getpid()),
                 "--entrypoint", "sleep"};
    spec.argv.insert(spec.argv.end(), c_.mount_args.begin(), c_.mount_args.end());
    if (!c_.workdir.empty() && c_.workdir[0] == '/') spec.argv.insert(spec.argv.end(), {"-w", c_.workdir});
    spec.argv.insert(spec.argv.end(), {c_.image, "infinity"});
    spec.timeout = std::chrono::milliseconds(120'000);
    auto r = bridge::process::run_process(spec, cancel);
    if (r.started && r.exit_code == 0) {
      started_ = true;
      spdlog::info("executor {}: container {} started from {}", c_.id, name_, c_.image);
      return {};
    }
    bridge::process::forget_at_exit(name_);
    if (!r.started) return "cannot start " + engine_ + ": " + r.spawn_error;
    if (r.cancelled) return "cancelled while starting a container from " + c_.image;
    return "cannot start a container from the image '" + c_.image + "' (" + engine_ + ": " +
           first_line(r.stderr_data.empty() ? r.stdout_data : r.stderr_data) + ")";
  }

  static std::string shell_words(const std::vector<std::string>& argv) {
    std::string s;
    for (const auto& a : argv) s += (s.empty() ? "" : " ") + shell_quote(a);
    return s;
  }

  config::ExecutorConfig c_;
  std::string engine_;
  std::string name_;  // the container exec'd into
  bool started_ = false;
};

}  // namespace

std::shared_ptr<Executor> make_container_executor(Deps deps, config::ExecutorConfig config) {
  auto channel = std::make_unique<ContainerChannel>(config);
  return make_remote_shell_executor(std::move(deps), std::move(config), std::move(channel));
}

Probe probe_container(const config::ExecutorConfig& config) {
  return probe_channel(config, std::make_unique<ContainerChannel>(config));
}

}  // namespace runtime::executors
