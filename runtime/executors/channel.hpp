#pragma once
// How a remote executor reaches its machine (DESIGN §10): a local command that runs a POSIX sh
// command line there with stdin, stdout and stderr passed through: `ssh` on the executor's
// multiplexed connection, `podman exec -i` / `docker exec -i` into a container. The executor
// (RemoteShellExecutor) writes the scripts; a channel only carries them, opens and closes what it
// needs, and tells its own failures from the script's. `kubectl exec -i` into a pod would be one
// more Channel.
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "bridge/process/child_process.hpp"

namespace runtime::executors {

class Channel {
 public:
  virtual ~Channel() = default;
  // "ssh", "container", "devcontainer" (ExecutorInfo::type).
  virtual std::string type() const = 0;
  // How messages name the place: "me@devbox:22", "podman app-dev".
  virtual std::string where() const = 0;
  // The local argv that runs `command_line` there, by a POSIX shell, stdin/stdout/stderr through.
  virtual std::vector<std::string> argv(const std::string& command_line) const = 0;
  // Why the channel itself failed on this run, in words a user can act on (the connection was
  // refused, the container is gone); nullopt when it carried the command, whatever its exit.
  virtual std::optional<std::string> failure(const bridge::process::ProcessResult& result) const = 0;
  // Blocking: makes the place ready before the first command (an image-mode container is
  // started); "" or why not. `cancel`, when set, is polled.
  virtual std::string open(const std::atomic<bool>* /*cancel*/) { return {}; }
  // Blocking, bounded: ends what open() and the commands left (the ssh master, the container).
  virtual void close() {}
  // Whether open() starts the place for those who use it (an image-mode container): then it goes
  // (close) once no session uses it, and the next use starts a fresh one.
  virtual bool started_for_use() const { return false; }
  // The argv that makes the local `local_address` ("127.0.0.1:<port>") lead to `destination`
  // ("host:port") from there, for as long as the channel is open; nullopt where it cannot.
  virtual std::optional<std::vector<std::string>> forward_argv(const std::string& /*local_address*/,
                                                               const std::string& /*destination*/) const {
    return std::nullopt;
  }
};

}  // namespace runtime::executors
