// RemoteShellExecutor (remote_shell_executor.hpp): what an executor does, as sh scripts sent over
// its Channel. A remote command runs under a wrapper that puts it in its own process group and
// kills that group when the wrapper's stdin reaches EOF, which happens when its channel closes:
// the command ended, we killed our channel's client (cancel, timeout), or the channel died with
// us (the orphan guard ends what we started when openvaala dies, SIGKILL included).
#include "runtime/executors/remote_shell_executor.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "runtime/executors/helper_binary.hpp"
#include "runtime/executors/remote_helper.hpp"
#include "runtime/executors/run_async.hpp"
#include "runtime/protocol/executor_paths.hpp"
#include "support/one_shot_event.hpp"

namespace runtime::executors {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kFileOpTimeout{60'000};

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

// The working directory as a shell word: `~` and `~/x` start at the remote home.
std::string workdir_word(const std::string& w) {
  if (w.empty() || w == "~") return "\"$HOME\"";
  if (w.rfind("~/", 0) == 0) return "\"$HOME\"/" + shell_quote(w.substr(2));
  return shell_quote(w);
}

// What the first command there learns: the working directory, bash, tar, and for the helper the
// machine and whether this build is there.
struct Place {
  std::string workdir;  // absolute; empty when not there
  bool has_bash = false;
  bool has_tar = false;
  RemoteHelper::There there;
};

class RemoteShellExecutor : public Executor, public ExecutorPaths {
 public:
  RemoteShellExecutor(Deps deps, config::ExecutorConfig c, std::unique_ptr<Channel> channel)
      : deps_(std::move(deps)), c_(std::move(c)), channel_(std::move(channel)) {
    info_ = {c_.id, channel_->type(), channel_->where(), true, false, c_.workdir.empty() ? "~" : c_.workdir};
  }
  ~RemoteShellExecutor() override { shutdown(); }

  const ExecutorInfo& info() const override { return info_; }
  std::optional<std::string> take_notice() override { return std::exchange(notice_, std::nullopt); }

  boost::asio::awaitable<std::string> working_directory(support::CancelSource* cancel) override {
    co_await connect(cancel);
    co_return place_.workdir;
  }

  boost::asio::awaitable<std::string> read_file(const std::string& path, support::CancelSource* cancel) override {
    co_await connect(cancel);
    if (auto h = helper_) co_return co_await h->read_file(path, cancel);
    // A FIFO or a device there would hold the call until cancelled: only regular files.
    const std::string q = shell_quote(path);
    const std::string script =
        "if [ -e " + q + " ] && [ ! -f " + q + " ]; then echo 'read: it is not a regular file' >&2; exit 1; fi; exec cat -- " + q;
    auto out = co_await over_channel(in_workdir(script), {}, kMaxReadFileBytes, cancel);
    check(out, "cannot read " + path);
    co_return std::move(out.stdout_data);
  }

  // Atomic there: a temp file beside the target, then mv (rename(2)).
  boost::asio::awaitable<void> write_file(const std::string& path, const std::string& content,
                                          support::CancelSource* cancel) override {
    co_await connect(cancel);
    if (auto h = helper_) co_return co_await h->write_file(path, content, cancel);
    const std::string script =
        "f=" + shell_quote(path) +
        "; d=$(dirname -- \"$f\") && mkdir -p -- \"$d\" && t=$(mktemp \"$d/.openvaala.XXXXXX\") || exit 1\n"
        "if [ -e \"$f\" ]; then chmod \"$(stat -c %a -- \"$f\" 2>/dev/null || echo 644)\" \"$t\"; "
        "else chmod \"$(printf %o $(( 0666 & ~0$(umask) )))\" \"$t\"; fi\n"
        "cat > \"$t\" && mv -f -- \"$t\" \"$f\" || { rm -f -- \"$t\"; exit 1; }";
    auto out = co_await over_channel(in_workdir(script), content, 64 * 1024, cancel);
    check(out, "cannot write " + path);
  }

  boost::asio::awaitable<void> remove_file(const std::string& path, support::CancelSource* cancel) override {
    co_await connect(cancel);
    if (auto h = helper_) co_return co_await h->remove_file(path, cancel);
    auto out = co_await over_channel(in_workdir("rm -- " + shell_quote(path)), {}, 64 * 1024, cancel);
    check(out, "cannot remove " + path);
  }

  boost::asio::awaitable<FileInfo> stat(const std::string& path, support::CancelSource* cancel) override {
    co_await connect(cancel);
    if (auto h = helper_) co_return co_await h->stat(path, cancel);
    const std::string q = shell_quote(path);
    auto out = co_await over_channel(
        in_workdir("if [ -d " + q + " ]; then echo d; elif [ -e " + q + " ]; then echo f $(wc -c < " + q + "); else echo n; fi"),
        {}, 4096, cancel);
    check(out, "cannot look at " + path);
    FileInfo fi;
    const auto& s = out.stdout_data;
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
    std::string o;
    if (auto h = helper_) {
      o = co_await h->real_paths(paths, cancel);
    } else {
      std::string args;
      for (const auto& p : paths) args += " " + shell_quote(p);
      const std::string script = "realpath -m -z -- \"$@\" \"${XDG_CONFIG_HOME:-$HOME/.config}/openvaala\"";
      auto out = co_await over_channel(in_workdir(script) + " sh" + args, {}, 1024 * 1024, cancel);
      check(out, "cannot resolve paths");
      o = std::move(out.stdout_data);
    }
    std::vector<std::string> real;
    for (std::size_t at = 0, end; (end = o.find('\0', at)) != std::string::npos; at = end + 1)
      real.push_back(o.substr(at, end - at));
    if (real.size() != paths.size() + 1)
      throw error("cannot resolve paths: realpath answered " + std::to_string(real.size()) + " of " + std::to_string(paths.size() + 1));
    RealPaths r;
    r.config_root = real.back();
    real.pop_back();
    r.paths = std::move(real);
    co_return r;
  }

  boost::asio::awaitable<RunResult> run(RunRequest request, support::CancelSource* cancel) override {
    // The sandbox helper is local: a command meant to run confined must not run here unconfined.
    if (!request.wrapper.empty()) throw error("commands cannot run in the sandbox on " + info_.type + " executors");
    co_await connect(cancel);
    if (!place_.has_bash) throw error("bash is not installed there (not found on the PATH there)");
    if (auto h = helper_) co_return co_await h->run(request, cancel);
    auto tail = std::make_shared<detail::OutputTail>(request.max_output_bytes);
    auto on_output = [tail, user = std::move(request.on_output)](std::string_view chunk) {
      tail->add(chunk);
      if (user) user(chunk);
    };
    bridge::process::ProcessSpec spec;
    spec.argv = channel_->argv("bash -c " + shell_quote(run_wrapper(request.command)));
    spec.keep_stdin_open = true;
    spec.timeout = request.timeout;
    spec.max_output_bytes = request.max_output_bytes;
    // Only stdout is the command's; the channel's own complaints arrive on stderr.
    auto out = co_await detail::run_on_pool(deps_, std::move(spec), std::move(on_output), cancel);
    if (!out.started) throw error("cannot start " + channel_->argv("")[0] + ": " + out.spawn_error);
    // The wrapper reports the exit status itself: a run that ends without it lost the channel
    // (the channel's own failures and a command's exit status can look alike).
    const bool reported = out.stderr_data.find("OVEXIT ") != std::string::npos;
    if (!out.cancelled && !out.timed_out && !reported) {
      if (out.stderr_data.find("OVNOWD") != std::string::npos) throw error("cannot enter the working directory " + place_.workdir);
      if (auto why = channel_->failure(out)) {
        lost_connection();
        throw error("the connection was lost while the command ran (" + *why + ")" +
                    (tail->text.empty() ? "" : "; output so far:\n" + tail->text));
      }
    }
    co_return RunResult{out.exit_code, out.term_signal, out.timed_out, std::move(tail->text), tail->truncated};
  }

  std::vector<std::string> launch_argv(const std::string& command_line, const EnvList& env) const override {
    if (place_.workdir.empty()) throw error("not connected");
    if (!place_.has_bash) throw error("bash is not installed there (not found on the PATH there)");
    const std::string script = "cd -- " + shell_quote(place_.workdir) + " || exit 125\n" + env_exports(c_.env) +
                               env_exports(env) + "exec bash -c " + shell_quote(command_line);
    return channel_->argv("bash -c " + shell_quote(script));
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
    auto out = co_await over_channel("sh -c " + shell_quote(script), content, 64 * 1024, cancel);
    check(out, "cannot copy " + path + " there");
    auto answer = parse_install_answer(out.stdout_data);
    if (!answer) throw error("cannot copy " + path + " there: unexpected answer '" + last_line(out.stdout_data) + "'");
    co_return std::move(*answer);
  }

  boost::asio::awaitable<std::string> copy_tree(const std::string& from, const std::string& to,
                                                support::CancelSource* cancel) override {
    co_await connect(cancel);
    if (!place_.has_tar) throw error("tar is not installed there (needed to copy " + from + ")");
    const std::string script =
        "f=" + workdir_word(to) +
        "\nif [ -d \"$f\" ]; then cat >/dev/null; echo \"OVDIR $f\"; exit 0; fi\n"
        "d=$(dirname -- \"$f\") && mkdir -p -- \"$d\" && t=$(mktemp -d \"$d/.openvaala.XXXXXX\") || exit 1\n"
        "if tar -xf - -C \"$t\" && mv -- \"$t\" \"$f\"; then echo \"OVDIR $f\"; else rm -rf -- \"$t\"; exit 1; fi";
    // tar here piped into the channel: nothing of the folder is held in memory.
    auto channel_argv = channel_->argv("sh -c " + shell_quote(script));
    bridge::process::ProcessSpec spec;
    spec.argv = {"sh", "-c", "d=$1; shift; tar -cf - -C \"$d\" . | \"$@\"", "sh", from};
    spec.argv.insert(spec.argv.end(), channel_argv.begin(), channel_argv.end());
    spec.timeout = std::chrono::milliseconds(300'000);
    auto out = co_await detail::run_on_pool(deps_, std::move(spec), {}, cancel);
    check(out, "cannot copy " + from + " there");
    const std::string line = last_line(out.stdout_data);
    if (line.rfind("OVDIR ", 0) != 0) throw error("cannot copy " + from + " there: " + last_line(out.stderr_data));
    co_return line.substr(6);
  }

  // A forwarding of the channel's (ssh -L on the multiplexed connection): it lives as long as it does.
  boost::asio::awaitable<std::string> forward_tcp(const std::string& host, const std::string& port,
                                                  support::CancelSource* cancel) override {
    co_await connect(cancel);
    const std::string destination = host + ":" + port;
    if (auto it = forwards_.find(destination); it != forwards_.end()) co_return it->second;
    const int local_port = free_loopback_port();
    if (local_port <= 0) throw error("cannot find a free local port to forward " + destination);
    const std::string local = "127.0.0.1:" + std::to_string(local_port);
    // IPv6 destinations need brackets.
    const std::string to = host.find(':') != std::string::npos ? "[" + host + "]:" + port : destination;
    auto argv = channel_->forward_argv(local, to);
    if (!argv) throw ExecutorError("executor '" + c_.id + "' cannot connect to servers from there (" + info_.type + ")");
    bridge::process::ProcessSpec spec;
    spec.argv = std::move(*argv);
    spec.timeout = kFileOpTimeout;
    auto out = co_await detail::run_on_pool(deps_, std::move(spec), {}, cancel);
    check(out, "cannot forward a local port to " + destination);
    spdlog::info("executor {}: {} is forwarded to {} there", c_.id, local, destination);
    forwards_[destination] = local;
    co_return local;
  }

  // Waits for a connect in progress, and holds the next ones until the place is closed.
  boost::asio::awaitable<void> release() override {
    if (!channel_->started_for_use()) co_return;
    while (connecting_) {
      auto pending = connecting_;
      co_await pending->wait();
    }
    if (!opened_) co_return;
    connecting_ = std::make_shared<support::OneShotEvent>(deps_.io);
    auto event = connecting_;
    auto helper = std::exchange(helper_, nullptr);
    lost_connection();
    opened_ = false;
    auto job = [helper, channel = channel_.get()] {
      if (helper) helper->close();
      channel->close();
      return true;
    };
    co_await support::run_blocking(*deps_.pool, std::move(job));
    spdlog::info("executor {}: released (no session uses it)", c_.id);
    connecting_.reset();
    event->set();
  }

  void shutdown() override {
    forwards_.clear();
    if (auto h = std::exchange(helper_, nullptr)) h->close();
    if (!opened_) return;
    opened_ = false;
    channel_->close();
  }

  // `config check --executor`: connect, then time one round trip on the warm channel.
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
    helper_ = std::exchange(started_helper_, nullptr);
    p.working_directory = place_.workdir;
    p.has_bash = place_.has_bash;
    p.has_tar = place_.has_tar;
    p.helper = helper_ ? "running (" + helper_->path() + " there): one stream for every operation"
                       : "not used (" + helper_why_ + "): one " + channel_->argv("")[0] + " command per operation";
    auto t1 = Clock::now();
    bridge::process::ProcessSpec spec;
    spec.argv = channel_->argv("true");
    bridge::process::run_process(spec);
    p.round_trip_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
    return p;
  }

 private:
  ExecutorError error(const std::string& what) const {
    return ExecutorError("executor '" + c_.id + "' (" + info_.type + " " + info_.where + "): " + what);
  }
  void check(const bridge::process::ProcessResult& out, const std::string& what) {
    if (!out.started) throw error("cannot start " + channel_->argv("")[0] + ": " + out.spawn_error);
    if (out.cancelled) throw error("cancelled");
    if (out.timed_out) throw error(what + ": timed out");
    if (auto why = channel_->failure(out)) {
      lost_connection();
      throw error(*why);
    }
    if (out.exit_code != 0) {
      std::string why = last_line(out.stderr_data);
      if (auto c = why.rfind(": "); c != std::string::npos) why = why.substr(c + 2);
      throw error(what + (why.empty() ? "" : ": " + why));
    }
  }
  std::string in_workdir(const std::string& script) const {
    return "sh -c " + shell_quote("cd -- " + shell_quote(place_.workdir) + " || exit 1\n" + script);
  }
  // The command in its own process group (set -m), stderr into stdout; a watcher on our stdin
  // (fd 3) kills that group once the channel closes.
  std::string run_wrapper(const std::string& command) const {
    return "cd -- " + shell_quote(place_.workdir) + " || { echo OVNOWD >&2; exit 1; }\n" + env_exports(c_.env) +
           "exec 3<&0\nset -m\n"
           "bash -c " + shell_quote(command) + " </dev/null 2>&1 &\n"
           "p=$!\n"
           "{ cat <&3 >/dev/null; kill -TERM -- -$p 2>/dev/null && { sleep 1; kill -KILL -- -$p 2>/dev/null; }; } "
           "</dev/null >/dev/null 2>&1 &\n"
           "exec 3<&-\nwait $p\nrc=$?\nprintf 'OVEXIT %d\\n' $rc >&2\nexit $rc";
  }

  boost::asio::awaitable<bridge::process::ProcessResult> over_channel(std::string command_line, std::string stdin_data,
                                                                      std::size_t max_out, support::CancelSource* cancel) {
    bridge::process::ProcessSpec spec;
    spec.argv = channel_->argv(command_line);
    spec.stdin_data = std::move(stdin_data);
    spec.max_output_bytes = max_out;
    spec.timeout = kFileOpTimeout;
    co_return co_await detail::run_on_pool(deps_, std::move(spec), {}, cancel);
  }

  // Opens the channel and learns the working directory, bash and tar; one at a time.
  boost::asio::awaitable<void> connect(support::CancelSource* cancel) {
    while (connecting_) {
      auto pending = connecting_;  // the event must outlive this waiter's wake-up
      co_await pending->wait();
    }
    if (!place_.workdir.empty()) co_return;
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
    helper_ = std::exchange(started_helper_, nullptr);  // made on the pool, used here
    connecting_.reset();
    event->set();
    if (!failure.empty()) throw ExecutorError(failure);
  }

  // Blocking; "" when connected, else the message.
  std::string connect_blocking(const std::atomic<bool>* cancel) {
    const std::string prefix = "executor '" + c_.id + "' (" + info_.type + " " + info_.where + "): ";
    if (auto why = channel_->open(cancel); !why.empty()) return prefix + why;
    opened_ = true;
    const std::string probe = "cd -- " + workdir_word(c_.workdir) +
                              " 2>/dev/null || { echo OVNOWD; exit 0; }\n"
                              "echo \"OVPWD $(pwd -P)\"\n"
                              "command -v bash >/dev/null 2>&1 && echo OVBASH\n"
                              "command -v tar >/dev/null 2>&1 && echo OVTAR\n" + helper_probe_lines();
    bridge::process::ProcessSpec spec;
    spec.argv = channel_->argv("sh -c " + shell_quote(probe));
    spec.timeout = std::chrono::milliseconds(30'000);
    auto r = bridge::process::run_process(spec, cancel);
    if (!r.started) return prefix + "cannot start " + spec.argv[0] + ": " + r.spawn_error;
    if (r.cancelled) return prefix + "cancelled while connecting";
    if (r.timed_out) return prefix + "cannot connect: no answer within 30 s";
    if (auto why = channel_->failure(r)) return prefix + *why;
    const auto& o = r.stdout_data;
    if (o.find("OVNOWD") != std::string::npos)
      return prefix + "the working directory '" + (c_.workdir.empty() ? "~" : c_.workdir) + "' does not exist there";
    auto at = o.find("OVPWD ");
    if (at == std::string::npos)
      return prefix + "the shell there did not answer as expected (exit " + std::to_string(r.exit_code.value_or(-1)) +
             "): " + last_line(r.stderr_data.empty() ? o : r.stderr_data);
    auto end = o.find('\n', at);
    place_.has_bash = o.find("OVBASH") != std::string::npos;
    place_.has_tar = o.find("OVTAR") != std::string::npos;
    place_.workdir = o.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
    RemoteHelper::read_probe(o, place_.there);
    place_.there.workdir = place_.workdir;
    spdlog::info("executor {}: connected to {} (working directory {}, bash {}, tar {})", c_.id, info_.where, place_.workdir,
                 place_.has_bash ? "yes" : "no", place_.has_tar ? "yes" : "no");
    start_helper(cancel);
    return {};
  }

  std::string helper_probe_lines() const {
    std::string unused;
    auto binary = c_.helper ? helper_binary(unused) : std::nullopt;
    return binary ? RemoteHelper::probe_lines(binary->hash) : std::string();
  }

  // Blocking, after the probe: the helper there, or why not (said once, as a notice).
  void start_helper(const std::atomic<bool>* cancel) {
    std::string why = "helper: false";
    auto h = c_.helper ? RemoteHelper::start(deps_, *channel_, c_, place_.there, cancel, why) : nullptr;
    if (h) {
      h->set_errors([this](const std::string& what) { return error(what); }, [this] { lost_connection(); });
      spdlog::info("executor {}: the helper runs there ({})", c_.id, h->path());
    } else if (!c_.helper) {
      spdlog::info("executor {}: one command per operation (helper: false)", c_.id);
    } else if (helper_why_ != why) {
      spdlog::warn("executor {}: one command per operation, the helper is not used: {}", c_.id, why);
      notice_ = "The helper cannot run there, so each operation is one `" + channel_->argv("")[0] + "` command (slower): " + why;
    }
    helper_why_ = h ? "" : why;
    started_helper_ = std::move(h);
  }

  // The next use connects again (ssh: a new master) and checks the place again.
  void lost_connection() {
    place_.workdir.clear();
    forwards_.clear();  // they ended with the old connection
    if (auto h = std::exchange(helper_, nullptr)) boost::asio::post(*deps_.pool, [h] { h->close(); });
  }

  Deps deps_;
  config::ExecutorConfig c_;
  std::unique_ptr<Channel> channel_;
  std::map<std::string, std::string> forwards_;  // "host:port" there -> "127.0.0.1:<port>" here
  ExecutorInfo info_;
  std::shared_ptr<support::OneShotEvent> connecting_;
  Place place_;
  bool opened_ = false;
  std::shared_ptr<RemoteHelper> helper_;          // null: the per-operation scripts
  std::shared_ptr<RemoteHelper> started_helper_;  // connect_blocking's, taken by connect()
  std::string helper_why_;                        // why there is none
  std::optional<std::string> notice_;             // for the first session that asks
};

}  // namespace

std::shared_ptr<Executor> make_remote_shell_executor(Deps deps, config::ExecutorConfig config,
                                                     std::unique_ptr<Channel> channel) {
  return std::make_shared<RemoteShellExecutor>(std::move(deps), std::move(config), std::move(channel));
}

Probe probe_channel(const config::ExecutorConfig& config, std::unique_ptr<Channel> channel) {
  boost::asio::thread_pool unused(1);
  RemoteShellExecutor ex(Deps{{}, &unused}, config, std::move(channel));
  auto p = ex.probe_now();
  ex.shutdown();
  return p;
}

}  // namespace runtime::executors
