// RemoteHelper (remote_helper.hpp): copying and starting the helper there, and the executor's
// operations as its requests.
#include "runtime/executors/remote_helper.hpp"

#include <spdlog/spdlog.h>

#include "runtime/executors/helper_binary.hpp"
#include "runtime/executors/helper_protocol.hpp"
#include "runtime/executors/remote_shell_executor.hpp"
#include "runtime/executors/run_async.hpp"

namespace runtime::executors {

namespace {

using namespace std::chrono_literals;
constexpr std::chrono::milliseconds kFileOpTimeout{60'000};
// A command without a timeout of its own.
constexpr std::chrono::milliseconds kNoTimeout = std::chrono::hours(24 * 365);

// Copies `file` to `rel` under $HOME there: a temp file beside it, then mv, so a helper that is
// starting never sees half of it. "" or why not.
std::string copy_there(const Channel& channel, const std::string& file, const std::string& rel,
                       const std::atomic<bool>* cancel) {
  const std::string script =
      "f=\"$HOME\"/" + shell_quote(rel) +
      "\nd=$(dirname -- \"$f\") && mkdir -p -- \"$d\" && t=$(mktemp \"$d/.openvaala.XXXXXX\") || exit 1\n"
      "cat > \"$t\" && chmod 755 \"$t\" && mv -f -- \"$t\" \"$f\" || { rm -f -- \"$t\"; exit 1; }";
  auto argv = channel.argv("sh -c " + shell_quote(script));
  bridge::process::ProcessSpec spec;
  spec.argv = {"sh", "-c", "f=$1; shift; exec \"$@\" < \"$f\"", "sh", file};
  spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
  spec.timeout = std::chrono::milliseconds(300'000);
  auto r = bridge::process::run_process(spec, cancel);
  if (!r.started) return "cannot start " + spec.argv[0] + ": " + r.spawn_error;
  if (r.cancelled) return "cancelled";
  if (r.timed_out) return "copying it took over 5 minutes";
  if (auto why = channel.failure(r)) return *why;
  if (r.exit_code != 0) return last_line(r.stderr_data.empty() ? "it exited with " + std::to_string(r.exit_code.value_or(-1)) : r.stderr_data);
  return {};
}

}  // namespace

std::string RemoteHelper::probe_lines(const std::string& hash) {
  return "echo \"OVARCH $(uname -m)\"\n[ -x \"$HOME\"/" + shell_quote(remote_helper_path(hash)) + " ] && echo OVHELPER\n";
}

void RemoteHelper::read_probe(const std::string& output, There& there) {
  if (auto at = output.find("OVARCH "); at != std::string::npos) {
    const auto end = output.find('\n', at);
    there.arch = output.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7);
  }
  there.has_build = output.find("OVHELPER") != std::string::npos;
}

std::shared_ptr<RemoteHelper> RemoteHelper::start(const Deps& deps, const Channel& channel, const config::ExecutorConfig& c,
                                                  const There& there, const std::atomic<bool>* cancel, std::string& why) {
  auto binary = helper_binary(why);
  if (!binary) return nullptr;
  if (there.arch != binary->arch) {
    why = "it is built for " + binary->arch + " and the machine there is " + (there.arch.empty() ? "unknown" : there.arch);
    return nullptr;
  }
  const std::string rel = remote_helper_path(binary->hash);
  if (!there.has_build) {
    if (auto failed = copy_there(channel, helper_file_to_copy(*binary).string(), rel, cancel); !failed.empty()) {
      why = "cannot copy it there: " + failed;
      return nullptr;
    }
    spdlog::info("executor {}: the helper was copied to ~/{} there", c.id, rel);
  }
  const std::string command = "cd -- " + shell_quote(there.workdir) + " || exit 125\n" + env_exports(c.env) +
                              "exec \"$HOME\"/" + shell_quote(rel) + " executor-helper";
  auto client = HelperClient::start(deps.io, channel.argv(command), 15s, why);
  if (!client) {
    why = "it did not start there: " + why;
    return nullptr;
  }
  return std::make_shared<RemoteHelper>(std::move(client), "~/" + rel);
}

void RemoteHelper::lost(const std::string& what, const std::string& after) {
  const std::string said = client_->why_lost();
  if (on_lost_) on_lost_();
  throw error_for_(what + ": the connection was lost" + (said.empty() ? "" : " (" + said + ")") + after);
}

boost::asio::awaitable<std::string> RemoteHelper::call(char kind, std::string payload, std::string what,
                                                       support::CancelSource* cancel) {
  HelperClient::Outcome outcome{};
  auto reply = co_await client_->call(kind, std::move(payload), kFileOpTimeout, cancel, outcome);
  switch (outcome) {
    case HelperClient::Outcome::Cancelled: throw error_for_("cancelled");
    case HelperClient::Outcome::TimedOut: throw error_for_(what + ": timed out");
    case HelperClient::Outcome::Lost: lost(what);
    case HelperClient::Outcome::Answered: break;
  }
  if (!reply.ok) throw error_for_(what + ": " + reply.payload);
  co_return std::move(reply.payload);
}

boost::asio::awaitable<std::string> RemoteHelper::read_file(const std::string& path, support::CancelSource* cancel) {
  std::string p;
  helper::put_string(p, path);
  co_return co_await call(helper::kRead, std::move(p), "cannot read " + path, cancel);
}

boost::asio::awaitable<void> RemoteHelper::write_file(const std::string& path, std::string content,
                                                      support::CancelSource* cancel) {
  std::string p;
  helper::put_string(p, path);
  p += content;
  co_await call(helper::kWrite, std::move(p), "cannot write " + path, cancel);
}

boost::asio::awaitable<void> RemoteHelper::remove_file(const std::string& path, support::CancelSource* cancel) {
  std::string p;
  helper::put_string(p, path);
  co_await call(helper::kRemove, std::move(p), "cannot remove " + path, cancel);
}

boost::asio::awaitable<FileInfo> RemoteHelper::stat(const std::string& path, support::CancelSource* cancel) {
  std::string p;
  helper::put_string(p, path);
  const std::string answer = co_await call(helper::kStat, std::move(p), "cannot look at " + path, cancel);
  FileInfo fi;
  helper::PayloadReader in(answer);
  const char kind = answer.empty() ? 'n' : in.byte();
  fi.exists = kind != 'n';
  fi.is_directory = kind == 'd';
  if (kind == 'f') fi.size = in.u64();
  co_return fi;
}

boost::asio::awaitable<std::string> RemoteHelper::real_paths(const std::vector<std::string>& paths,
                                                             support::CancelSource* cancel) {
  std::string p;
  helper::put_u32(p, static_cast<std::uint32_t>(paths.size()));
  for (const auto& path : paths) helper::put_string(p, path);
  co_return co_await call(helper::kRealPaths, std::move(p), "cannot resolve paths", cancel);
}

boost::asio::awaitable<RunResult> RemoteHelper::run(const RunRequest& request, support::CancelSource* cancel) {
  auto tail = std::make_shared<detail::OutputTail>(request.max_output_bytes);
  auto on_output = [tail, &user = request.on_output](std::string_view chunk) {
    tail->add(chunk);
    if (user) user(chunk);
  };
  HelperClient::Outcome outcome{};
  HelperClient::Exit exit;
  try {
    exit = co_await client_->spawn(request.command, std::move(on_output),
                                   request.timeout.count() > 0 ? request.timeout : kNoTimeout, cancel, outcome);
  } catch (const std::exception& e) {
    throw error_for_(e.what());
  }
  if (outcome == HelperClient::Outcome::Lost)
    lost("the command", tail->text.empty() ? std::string() : "; output so far:\n" + tail->text);
  co_return RunResult{exit.code, exit.signal, exit.timed_out, std::move(tail->text), tail->truncated};
}

}  // namespace runtime::executors
