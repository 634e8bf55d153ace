// `ssh`: a remote host through the system OpenSSH client (DESIGN §10). BatchMode, so nothing
// ever waits on a prompt; the user's ~/.ssh/config, agent and known_hosts apply (host-key
// checking is never turned off here); one multiplexed connection per executor (ControlMaster,
// its socket in a private folder), opened by the first use and closed by shutdown().
//
// A remote command runs under a wrapper that puts it in its own process group and kills that
// group when the wrapper's stdin reaches EOF, which happens when its ssh channel closes: the
// command ended, we killed our ssh client (cancel, timeout), or the connection died with us
// (the orphan guard ends the master when openvaala dies, SIGKILL included).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "runtime/executors/executors.hpp"
#include "runtime/executors/run_async.hpp"
#include "runtime/protocol/executor_paths.hpp"
#include "support/one_shot_event.hpp"

namespace runtime::executors {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kFileOpTimeout{60'000};

std::string last_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  auto nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

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

// The working directory as a shell word: `~` and `~/x` start at the remote home.
// A port on 127.0.0.1 that nobody listens on right now (the kernel's pick); 0 when none.
int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

std::string workdir_word(const std::string& w) {
  if (w.empty() || w == "~") return "\"$HOME\"";
  if (w.rfind("~/", 0) == 0) return "\"$HOME\"/" + shell_quote(w.substr(2));
  return shell_quote(w);
}

struct Outcome {
  bridge::process::ProcessResult p;
  bool ssh_failed() const { return p.started && p.exit_code == 255; }
};

class SshExecutor : public Executor, public ExecutorPaths {
 public:
  SshExecutor(Deps deps, config::ExecutorConfig c, fs::path control_dir)
      : deps_(std::move(deps)), c_(std::move(c)), control_path_(control_dir / c_.id) {
    std::string where = (c_.user ? *c_.user + "@" : "") + c_.host + (c_.port ? ":" + std::to_string(*c_.port) : "");
    info_ = {c_.id, "ssh", where, true, false, c_.workdir.empty() ? "~" : c_.workdir};
  }
  ~SshExecutor() override { shutdown(); }

  const ExecutorInfo& info() const override { return info_; }

  boost::asio::awaitable<std::string> working_directory(support::CancelSource* cancel) override {
    co_await connect(cancel);
    co_return workdir_;
  }

  boost::asio::awaitable<std::string> read_file(const std::string& path, support::CancelSource* cancel) override {
    co_await connect(cancel);
    // A FIFO or a device there would hold the call until cancelled: only regular files.
    const std::string q = shell_quote(path);
    const std::string script =
        "if [ -e " + q + " ] && [ ! -f " + q + " ]; then echo 'read: it is not a regular file' >&2; exit 1; fi; exec cat -- " + q;
    auto out = co_await ssh(in_workdir(script), {}, kMaxReadFileBytes, cancel);
    check(out, "cannot read " + path);
    co_return std::move(out.p.stdout_data);
  }

  // Atomic on the remote side: a temp file beside the target, then mv (rename(2)).
  boost::asio::awaitable<void> write_file(const std::string& path, const std::string& content,
                                          support::CancelSource* cancel) override {
    co_await connect(cancel);
    const std::string script =
        "f=" + shell_quote(path) +
        "; d=$(dirname -- \"$f\") && mkdir -p -- \"$d\" && t=$(mktemp \"$d/.openvaala.XXXXXX\") || exit 1\n"
        "if [ -e \"$f\" ]; then chmod \"$(stat -c %a -- \"$f\" 2>/dev/null || echo 644)\" \"$t\"; "
        "else chmod \"$(printf %o $(( 0666 & ~0$(umask) )))\" \"$t\"; fi\n"
        "cat > \"$t\" && mv -f -- \"$t\" \"$f\" || { rm -f -- \"$t\"; exit 1; }";
    auto out = co_await ssh(in_workdir(script), content, 64 * 1024, cancel);
    check(out, "cannot write " + path);
  }

  boost::asio::awaitable<void> remove_file(const std::string& path, support::CancelSource* cancel) override {
    co_await connect(cancel);
    auto out = co_await ssh(in_workdir("rm -- " + shell_quote(path)), {}, 64 * 1024, cancel);
    check(out, "cannot remove " + path);
  }

  boost::asio::awaitable<FileInfo> stat(const std::string& path, support::CancelSource* cancel) override {
    co_await connect(cancel);
    const std::string q = shell_quote(path);
    auto out = co_await ssh(in_workdir("if [ -d " + q + " ]; then echo d; elif [ -e " + q + " ]; then echo f $(wc -c < " + q +
                                       "); else echo n; fi"),
                            {}, 4096, cancel);
    check(out, "cannot look at " + path);
    FileInfo fi;
    const auto& s = out.p.stdout_data;
    fi.exists = !s.empty() && s[0] != 'n';
    fi.is_directory = !s.empty() && s[0] == 'd';
    if (s.size() > 2 && s[0] == 'f') fi.size = std::strtoull(s.c_str() + 2, nullptr, 10);
    co_return fi;
  }

  std::optional<fs::path> local_file(const std::string&) const override { return std::nullopt; }

  // Resolved there, in one call: `realpath -m` of each path, then of the config root there
  // (NUL-separated, so no name can pass for two).
  boost::asio::awaitable<RealPaths> real_paths(const std::vector<std::string>& paths,
                                               support::CancelSource* cancel) override {
    co_await connect(cancel);
    std::string args;
    for (const auto& p : paths) args += " " + shell_quote(p);
    const std::string script = "realpath -m -z -- \"$@\" \"${XDG_CONFIG_HOME:-$HOME/.config}/openvaala\"";
    auto out = co_await ssh(in_workdir(script) + " sh" + args, {}, 1024 * 1024, cancel);
    check(out, "cannot resolve paths");
    std::vector<std::string> real;
    const auto& o = out.p.stdout_data;
    for (std::size_t at = 0, end; (end = o.find('\0', at)) != std::string::npos; at = end + 1)
      real.push_back(o.substr(at, end - at));
    if (real.size() != paths.size() + 1) throw error("cannot resolve paths: realpath answered " + std::to_string(real.size()) + " of " + std::to_string(paths.size() + 1));
    RealPaths r;
    r.config_root = real.back();
    real.pop_back();
    r.paths = std::move(real);
    co_return r;
  }

  boost::asio::awaitable<RunResult> run(RunRequest request, support::CancelSource* cancel) override {
    // The sandbox helper is local: a command meant to run confined must not run here unconfined.
    if (!request.wrapper.empty()) throw error("commands cannot run in the sandbox on ssh executors");
    co_await connect(cancel);
    if (!has_bash_) throw error("bash is not installed there (not found on the remote PATH)");
    // The wrapper: the command in its own process group (set -m), stderr into stdout; a watcher
    // on our stdin (fd 3) kills that group once the channel closes.
    std::string env;
    for (const auto& [k, v] : c_.env) env += "export " + k + "=" + shell_quote(v) + "\n";
    const std::string wrapper = "cd -- " + shell_quote(workdir_) + " || exit 125\n" + env +
                                "exec 3<&0\nset -m\n"
                                "bash -c " + shell_quote(request.command) + " </dev/null 2>&1 &\n"
                                "p=$!\n"
                                "{ cat <&3 >/dev/null; kill -TERM -- -$p 2>/dev/null && { sleep 1; kill -KILL -- -$p 2>/dev/null; }; } "
                                "</dev/null >/dev/null 2>&1 &\n"
                                "exec 3<&-\nwait $p\nrc=$?\nprintf 'OVEXIT %d\\n' $rc >&2\nexit $rc";
    auto tail = std::make_shared<detail::OutputTail>(request.max_output_bytes);
    auto on_output = [tail, user = std::move(request.on_output)](std::string_view chunk) {
      tail->add(chunk);
      if (user) user(chunk);
    };
    auto spec = ssh_spec("bash -c " + shell_quote(wrapper));
    spec.keep_stdin_open = true;
    spec.timeout = request.timeout;
    spec.max_output_bytes = request.max_output_bytes;
    // Only stdout is the command's; ssh's own complaints arrive on stderr.
    auto ran = co_await detail::run_on_pool(deps_, std::move(spec), std::move(on_output), cancel);
    Outcome out{std::move(ran)};
    if (!out.p.started) throw error("cannot start ssh: " + out.p.spawn_error);
    // The wrapper reports the exit status itself: an ssh that ends without it lost the connection
    // (ssh's own 255 and a command's 255 look alike).
    const bool reported = out.p.stderr_data.find("OVEXIT ") != std::string::npos;
    if (!out.p.cancelled && !out.p.timed_out && !reported && out.p.exit_code == 255) {
      lost_connection();
      std::string detail = ssh_failure(out.p.stderr_data, c_.host);
      throw error("the connection was lost while the command ran (" + detail + ")" +
                  (tail->text.empty() ? "" : "; output so far:\n" + tail->text));
    }
    if (!reported && out.p.exit_code == 125) throw error("cannot enter the working directory " + workdir_);
    co_return RunResult{out.p.exit_code, out.p.term_signal, out.p.timed_out, std::move(tail->text), tail->truncated};
  }

  std::vector<std::string> launch_argv(const std::string& command_line, const EnvList& env) const override {
    if (workdir_.empty()) throw error("not connected");
    if (!has_bash_) throw error("bash is not installed there (not found on the remote PATH)");
    std::string script = "cd -- " + shell_quote(workdir_) + " || exit 125\n";
    for (const auto& [k, v] : c_.env) script += "export " + k + "=" + shell_quote(v) + "\n";
    for (const auto& [k, v] : env) script += "export " + k + "=" + shell_quote(v) + "\n";
    script += "exec bash -c " + shell_quote(command_line);
    return ssh_spec("bash -c " + shell_quote(script)).argv;
  }

  // One round trip: the new content goes to a temp file beside the target, which replaces the
  // target only when content (cksum) or mode differ.
  boost::asio::awaitable<InstallResult> install_file(const std::string& path, const std::string& content, unsigned mode,
                                                     support::CancelSource* cancel) override {
    co_await connect(cancel);
    char m[8];
    std::snprintf(m, sizeof m, "%o", mode & 07777);
    const std::string script =
        "f=" + workdir_word(path) +
        "\nd=$(dirname -- \"$f\") && mkdir -p -- \"$d\" && t=$(mktemp \"$d/.openvaala.XXXXXX\") || exit 1\n"
        "cat > \"$t\" && chmod " + std::string(m) + " \"$t\" || { rm -f -- \"$t\"; exit 1; }\n"
        "if [ -f \"$f\" ] && [ \"$(stat -c %a -- \"$f\")\" = \"$(stat -c %a -- \"$t\")\" ] && "
        "[ \"$(cksum < \"$f\")\" = \"$(cksum < \"$t\")\" ]; then rm -f -- \"$t\"; echo \"OVSAME $f\"; "
        "else mv -f -- \"$t\" \"$f\" && echo \"OVNEW $f\"; fi";
    auto out = co_await ssh("sh -c " + shell_quote(script), content, 64 * 1024, cancel);
    check(out, "cannot copy " + path + " there");
    auto answer = parse_install_answer(out.p.stdout_data);
    if (!answer) throw error("cannot copy " + path + " there: unexpected answer '" + last_line(out.p.stdout_data) + "'");
    co_return std::move(*answer);
  }

  boost::asio::awaitable<std::string> copy_tree(const std::string& from, const std::string& to,
                                                support::CancelSource* cancel) override {
    co_await connect(cancel);
    if (!has_tar_) throw error("tar is not installed there (needed to copy " + from + ")");
    const std::string script =
        "f=" + workdir_word(to) +
        "\nif [ -d \"$f\" ]; then cat >/dev/null; echo \"OVDIR $f\"; exit 0; fi\n"
        "d=$(dirname -- \"$f\") && mkdir -p -- \"$d\" && t=$(mktemp -d \"$d/.openvaala.XXXXXX\") || exit 1\n"
        "if tar -xf - -C \"$t\" && mv -- \"$t\" \"$f\"; then echo \"OVDIR $f\"; else rm -rf -- \"$t\"; exit 1; fi";
    // tar here piped into ssh: nothing of the folder is held in memory.
    auto ssh_argv = ssh_spec("sh -c " + shell_quote(script)).argv;
    bridge::process::ProcessSpec spec;
    spec.argv = {"sh", "-c", "d=$1; shift; tar -cf - -C \"$d\" . | \"$@\"", "sh", from};
    spec.argv.insert(spec.argv.end(), ssh_argv.begin(), ssh_argv.end());
    spec.timeout = std::chrono::milliseconds(300'000);
    auto ran = co_await detail::run_on_pool(deps_, std::move(spec), {}, cancel);
    Outcome out{std::move(ran)};
    check(out, "cannot copy " + from + " there");
    const std::string line = last_line(out.p.stdout_data);
    if (line.rfind("OVDIR ", 0) != 0) throw error("cannot copy " + from + " there: " + last_line(out.p.stderr_data));
    co_return line.substr(6);
  }

  // `ssh -O forward -L` on the multiplexed connection: the forwarding lives as long as it does.
  boost::asio::awaitable<std::string> forward_tcp(const std::string& host, const std::string& port,
                                                  support::CancelSource* cancel) override {
    co_await connect(cancel);
    const std::string destination = host + ":" + port;
    if (auto it = forwards_.find(destination); it != forwards_.end()) co_return it->second;
    const int local_port = free_loopback_port();
    if (local_port <= 0) throw error("cannot find a free local port to forward " + destination);
    const std::string local = "127.0.0.1:" + std::to_string(local_port);
    auto spec = ssh_spec("");
    spec.argv.pop_back();  // no remote command
    // IPv6 destinations need brackets in -L.
    const std::string to = host.find(':') != std::string::npos ? "[" + host + "]:" + port : destination;
    spec.argv.insert(spec.argv.end() - 1, {"-O", "forward", "-L", local + ":" + to});
    spec.timeout = kFileOpTimeout;
    auto ran = co_await detail::run_on_pool(deps_, std::move(spec), {}, cancel);
    check(Outcome{std::move(ran)}, "cannot forward a local port to " + destination);
    spdlog::info("executor {}: {} is forwarded to {} there", c_.id, local, destination);
    forwards_[destination] = local;
    co_return local;
  }

  void shutdown() override {
    forwards_.clear();
    if (!connected_once_) return;
    connected_once_ = false;
    auto spec = ssh_spec("");
    spec.argv.pop_back();  // no remote command
    spec.argv.insert(spec.argv.end() - 1, {"-O", "exit"});  // before the host
    spec.timeout = std::chrono::milliseconds(3000);
    auto r = bridge::process::run_process(spec);
    spdlog::info("executor {}: connection closed ({})", c_.id, r.exit_code.value_or(-1));
  }

  // `config check --executor`: connect, then time one round trip on the warm connection.
  Probe probe_now() {
    Probe p;
    auto t0 = Clock::now();
    auto r = connect_blocking(nullptr);
    p.connect_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!r.empty()) {
      p.error = r;
      return p;
    }
    p.reachable = true;
    p.working_directory = workdir_;
    p.has_bash = has_bash_;
    p.has_tar = has_tar_;
    auto t1 = Clock::now();
    bridge::process::run_process(ssh_spec("true"));
    p.round_trip_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
    return p;
  }

 private:
  ExecutorError error(const std::string& what) const {
    return ExecutorError("executor '" + c_.id + "' (ssh " + info_.where + "): " + what);
  }
  void check(const Outcome& out, const std::string& what) {
    if (!out.p.started) throw error("cannot start ssh: " + out.p.spawn_error);
    if (out.p.cancelled) throw error("cancelled");
    if (out.p.timed_out) throw error(what + ": timed out");
    if (out.ssh_failed()) {
      lost_connection();
      throw error(ssh_failure(out.p.stderr_data, c_.host));
    }
    if (out.p.exit_code != 0) {
      std::string why = last_line(out.p.stderr_data);
      if (auto c = why.rfind(": "); c != std::string::npos) why = why.substr(c + 2);
      throw error(what + (why.empty() ? "" : ": " + why));
    }
  }
  std::string in_workdir(const std::string& script) const {
    return "sh -c " + shell_quote("cd -- " + shell_quote(workdir_) + " || exit 1\n" + script);
  }

  bridge::process::ProcessSpec ssh_spec(const std::string& remote) const {
    bridge::process::ProcessSpec spec;
    spec.argv = {"ssh"};
    // The user's options first: for -o, ssh keeps the first value it reads.
    for (const auto& o : c_.ssh_options) spec.argv.insert(spec.argv.end(), {"-o", o});
    for (const char* o : {"BatchMode=yes", "ControlMaster=auto", "ControlPersist=yes", "ConnectTimeout=15",
                          "ServerAliveInterval=15", "ServerAliveCountMax=3"})
      spec.argv.insert(spec.argv.end(), {"-o", o});
    spec.argv.insert(spec.argv.end(), {"-o", "ControlPath=" + control_path_.string()});
    if (c_.port) spec.argv.insert(spec.argv.end(), {"-p", std::to_string(*c_.port)});
    if (c_.user) spec.argv.insert(spec.argv.end(), {"-l", *c_.user});
    if (c_.identity_file) spec.argv.insert(spec.argv.end(), {"-i", c_.identity_file->string()});
    spec.argv.push_back(c_.host);
    spec.argv.push_back(remote);
    return spec;
  }

  boost::asio::awaitable<Outcome> ssh(std::string remote, std::string stdin_data, std::size_t max_out,
                                      support::CancelSource* cancel) {
    auto spec = ssh_spec(remote);
    spec.stdin_data = std::move(stdin_data);
    spec.max_output_bytes = max_out;
    spec.timeout = kFileOpTimeout;
    auto ran = co_await detail::run_on_pool(deps_, std::move(spec), {}, cancel);
    co_return Outcome{std::move(ran)};
  }

  // Opens the connection and learns the working directory, bash and tar; one at a time.
  boost::asio::awaitable<void> connect(support::CancelSource* cancel) {
    while (connecting_) {
      auto pending = connecting_;  // the event must outlive this waiter's wake-up
      co_await pending->wait();
    }
    if (!workdir_.empty()) co_return;
    connecting_ = std::make_shared<support::OneShotEvent>(deps_.io);
    auto event = connecting_;
    auto flag = std::make_shared<std::atomic<bool>>(false);
    support::CancelSource::Registration reg;
    if (cancel) reg = cancel->on_cancel([flag] { flag->store(true); });
    auto job = [this, flag] { return connect_blocking(flag.get()); };
    std::string failure;
    try {
      failure = co_await support::run_blocking(*deps_.pool, std::move(job));
    } catch (...) {
      failure = "cannot connect";
    }
    connecting_.reset();
    event->set();
    if (!failure.empty()) throw ExecutorError(failure);
  }

  // Blocking; "" when connected, else the message.
  std::string connect_blocking(const std::atomic<bool>* cancel) {
    const std::string probe = "cd -- " + workdir_word(c_.workdir) +
                              " 2>/dev/null || { echo OVNOWD; exit 0; }\n"
                              "echo \"OVPWD $(pwd -P)\"\n"
                              "command -v bash >/dev/null 2>&1 && echo OVBASH\n"
                              "command -v tar >/dev/null 2>&1 && echo OVTAR\n";
    auto spec = ssh_spec("sh -c " + shell_quote(probe));
    spec.timeout = std::chrono::milliseconds(30'000);
    auto r = bridge::process::run_process(spec, cancel);
    const std::string prefix = "executor '" + c_.id + "' (ssh " + info_.where + "): ";
    if (!r.started) return prefix + "cannot start ssh: " + r.spawn_error;
    if (r.cancelled) return prefix + "cancelled while connecting";
    if (r.timed_out) return prefix + "cannot connect: no answer within 30 s";
    if (r.exit_code == 255) return prefix + ssh_failure(r.stderr_data, c_.host);
    connected_once_ = true;
    const auto& o = r.stdout_data;
    if (o.find("OVNOWD") != std::string::npos)
      return prefix + "the working directory '" + (c_.workdir.empty() ? "~" : c_.workdir) + "' does not exist there";
    auto at = o.find("OVPWD ");
    if (at == std::string::npos)
      return prefix + "the remote shell did not answer as expected (exit " + std::to_string(r.exit_code.value_or(-1)) +
             "): " + last_line(r.stderr_data.empty() ? o : r.stderr_data);
    auto end = o.find('\n', at);
    has_bash_ = o.find("OVBASH") != std::string::npos;
    has_tar_ = o.find("OVTAR") != std::string::npos;
    workdir_ = o.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
    spdlog::info("executor {}: connected to {} (working directory {}, bash {}, tar {})", c_.id, info_.where, workdir_,
                 has_bash_ ? "yes" : "no", has_tar_ ? "yes" : "no");
    return {};
  }

  // The next use connects again (a new master) and re-checks the host.
  void lost_connection() {
    workdir_.clear();
    forwards_.clear();  // they ended with the old master
  }

  Deps deps_;
  config::ExecutorConfig c_;
  fs::path control_path_;
  std::map<std::string, std::string> forwards_;  // "host:port" there -> "127.0.0.1:<port>" here
  ExecutorInfo info_;
  std::shared_ptr<support::OneShotEvent> connecting_;
  std::string workdir_;  // absolute, once connected
  bool has_bash_ = false;
  bool has_tar_ = false;
  bool connected_once_ = false;
};

}  // namespace

std::optional<InstallResult> parse_install_answer(const std::string& stdout_text) {
  const std::string line = last_line(stdout_text);
  using Answer = std::pair<std::string_view, bool>;  // prefix, written
  for (const auto& [prefix, written] : {Answer{"OVSAME ", false}, Answer{"OVNEW ", true}})
    if (line.starts_with(prefix) && line.size() > prefix.size()) return InstallResult{line.substr(prefix.size()), written};
  return std::nullopt;
}

std::shared_ptr<Executor> make_ssh_executor(Deps deps, config::ExecutorConfig config, fs::path control_dir) {
  return std::make_shared<SshExecutor>(std::move(deps), std::move(config), std::move(control_dir));
}

Probe probe_ssh(const config::ExecutorConfig& config, const fs::path& control_dir) {
  boost::asio::thread_pool unused(1);
  SshExecutor ex(Deps{{}, &unused}, config, control_dir);
  auto p = ex.probe_now();
  ex.shutdown();
  return p;
}

}  // namespace runtime::executors
