// `ssh`: a remote host through the system OpenSSH client (DESIGN §10). BatchMode, so nothing
// ever waits on a prompt; the user's ~/.ssh/config, agent and known_hosts apply (host-key
// checking is never turned off here); one multiplexed connection per executor (ControlMaster,
// its socket in a private folder), opened by the first use and closed by shutdown(). The
// orphan guard ends the master when openvaala dies, SIGKILL included; the commands' channels
// close with it.
#include <spdlog/spdlog.h>

#include "runtime/executors/executors.hpp"
#include "runtime/executors/remote_shell_executor.hpp"

namespace runtime::executors {

namespace {

// What went wrong with ssh itself (exit 255), in words a user can act on.
std::string ssh_failure(const std::string& stderr_text, const std::string& host) {
  const std::string line = last_line(stderr_text);
  auto has = [&](const char* s) { return stderr_text.find(s) != std::string::npos; };
  if (has("Could not resolve hostname")) return "cannot connect: host name '" + host + "' does not resolve";
  if (has("Connection refused")) return "cannot connect: connection refused (is sshd running there, on that port?)";
  if (has("timed out")) return "cannot connect: connection timed out (" + line + ")";
  if (has("No route to host") || has("Network is unreachable")) return "cannot connect: host unreachable (" + line + ")";
  if (has("Host key verification failed") || has("REMOTE HOST IDENTIFICATION HAS CHANGED"))
    return "the host key is not trusted: add it to ~/.ssh/known_hosts (connect once with `ssh " + host + "`)";
  if (has("Permission denied"))
    return "authentication refused (" + line + "); openvaala uses BatchMode, so it needs a key or the ssh agent, never a password";
  if (has("closed by remote host") || has("Broken pipe") || has("Connection reset") || has("mux_client") ||
      has("Control socket") || has("lost connection"))
    return "the connection was lost (" + line + ")";
  return "ssh failed: " + (line.empty() ? std::string("exit status 255") : line);
}

class SshChannel : public Channel {
 public:
  SshChannel(config::ExecutorConfig c, fs::path control_dir) : c_(std::move(c)), control_path_(control_dir / c_.id) {}

  std::string type() const override { return "ssh"; }
  std::string where() const override {
    return (c_.user ? *c_.user + "@" : "") + c_.host + (c_.port ? ":" + std::to_string(*c_.port) : "");
  }
  // ssh hands the command line to the login shell there.
  std::vector<std::string> argv(const std::string& command_line) const override {
    auto a = options();
    a.push_back(c_.host);
    a.push_back(command_line);
    return a;
  }
  std::optional<std::string> failure(const bridge::process::ProcessResult& r) const override {
    if (!r.started || r.exit_code != 255) return std::nullopt;
    return ssh_failure(r.stderr_data, c_.host);
  }
  void close() override {
    bridge::process::ProcessSpec spec;
    spec.argv = options();
    spec.argv.insert(spec.argv.end(), {"-O", "exit", c_.host});
    spec.timeout = std::chrono::milliseconds(3000);
    auto r = bridge::process::run_process(spec);
    spdlog::info("executor {}: connection closed ({})", c_.id, r.exit_code.value_or(-1));
  }
  // `ssh -O forward -L` on the multiplexed connection.
  std::optional<std::vector<std::string>> forward_argv(const std::string& local_address,
                                                       const std::string& destination) const override {
    auto a = options();
    a.insert(a.end(), {"-O", "forward", "-L", local_address + ":" + destination, c_.host});
    return a;
  }

 private:
  std::vector<std::string> options() const {
    std::vector<std::string> a{"ssh"};
    // The user's options first: for -o, ssh keeps the first value it reads.
    for (const auto& o : c_.ssh_options) a.insert(a.end(), {"-o", o});
    for (const char* o : {"BatchMode=yes", "ControlMaster=auto", "ControlPersist=yes", "ConnectTimeout=15",
                          "ServerAliveInterval=15", "ServerAliveCountMax=3"})
      a.insert(a.end(), {"-o", o});
    a.insert(a.end(), {"-o", "ControlPath=" + control_path_.string()});
    if (c_.port) a.insert(a.end(), {"-p", std::to_string(*c_.port)});
    if (c_.user) a.insert(a.end(), {"-l", *c_.user});
    if (c_.identity_file) a.insert(a.end(), {"-i", c_.identity_file->string()});
    return a;
  }

  config::ExecutorConfig c_;
  fs::path control_path_;
};

}  // namespace

std::shared_ptr<Executor> make_ssh_executor(Deps deps, config::ExecutorConfig config, fs::path control_dir) {
  auto channel = std::make_unique<SshChannel>(config, std::move(control_dir));
  return make_remote_shell_executor(std::move(deps), std::move(config), std::move(channel));
}

Probe probe_ssh(const config::ExecutorConfig& config, const fs::path& control_dir) {
  return probe_channel(config, std::make_unique<SshChannel>(config, control_dir));
}

}  // namespace runtime::executors
