// bash: runs a shell command, on local in an editor terminal when the client offers terminals
// (the user watches it live), else through the call's executor (a local child process in its own
// process group, or a remote one over ssh), its output streamed into the tool call.
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <chrono>

#include "support/json_read.hpp"
#include "runtime/tools/tool.hpp"

namespace runtime::tools {

namespace json = boost::json;

namespace {

constexpr std::int64_t kDefaultTimeoutMs = 120'000;
constexpr std::int64_t kMaxTimeoutMs = 600'000;
constexpr std::int64_t kOutputLimit = 64 * 1024;
constexpr std::size_t kMaxShownBytes = 16 * 1024;
constexpr std::chrono::milliseconds kShowEvery{250};

std::string result_text(const std::string& output, bool truncated, std::optional<std::int64_t> exit_code,
                        const std::optional<std::string>& signal, bool timed_out, std::int64_t timeout_ms) {
  std::string text;
  if (timed_out) text += "The command timed out after " + std::to_string(timeout_ms) + " ms and was killed.\n";
  if (exit_code) text += "Exit code: " + std::to_string(*exit_code) + "\n";
  else if (signal) text += "Killed by signal " + *signal + "\n";
  if (truncated) text += "(output truncated to the last 64 KB)\n";
  text += "Output:\n" + output;
  return text;
}

class BashTool : public Tool {
 public:
  std::string name() const override { return "bash"; }

  ToolSpec spec() const override {
    return {name(),
            "Run a shell command with bash in the working directory and return its exit code and output "
            "(stdout and stderr, at most 64 KB). Default timeout 120000 ms, at most 600000. Unless the session "
            "is in Full auto, local commands run in a sandbox: they write only inside the session's folders and "
            "the temp folders, and cannot read openvaala's config folder.",
            json::object{{"type", "object"},
                         {"properties",
                          json::object{{"command", json::object{{"type", "string"}, {"description", "The command"}}},
                                       {"timeout_ms", json::object{{"type", "integer"},
                                                                   {"description", "Timeout in milliseconds"}}},
                                       {"executor", executor_property()}}},
                         {"required", json::array{"command"}}}};
  }

  bool runs_on_executor() const override { return true; }

  ToolDescription describe(const json::object& args, const ToolEnv& env) const override {
    ToolDescription d;
    d.kind = ToolKind::Execute;
    std::string cmd(support::str_at(args, "command"));
    if (auto nl = cmd.find('\n'); nl != std::string::npos) cmd = cmd.substr(0, nl) + " …";
    if (cmd.size() > 120) cmd = cmd.substr(0, 120) + "…";
    d.title = (cmd.empty() ? "Run command" : "`" + cmd + "`") + on_executor_suffix(args, env);
    return d;
  }

  boost::asio::awaitable<ToolResult> run(ToolContext& ctx, const json::object& args) override {
    std::string command(support::str_at(args, "command"));
    if (command.empty()) co_return error_result("bash needs a 'command'.");
    auto timeout_ms = std::clamp<std::int64_t>(support::int_at(args, "timeout_ms").value_or(kDefaultTimeoutMs), 1, kMaxTimeoutMs);
    // Refused before anything is asked or attempted: a files-only executor runs nothing.
    if (const auto& info = ctx.executor().info(); !info.can_run)
      co_return error_result("Executor '" + info.id + "' (" + info.type +
                             ") has files only: bash cannot run there. Use read_file/apply_patch on it, or run the "
                             "command on a local or ssh executor.");
    // Due but impossible (no Landlock): refused before anything is asked, never run unconfined.
    if (const auto& refusal = ctx.env().sandbox.refusal; !refusal.empty()) co_return error_result(refusal);
    auto auth = co_await ctx.authorize(Permission::Execute, {}, {});
    if (auth == Authorization::Cancelled) throw ToolCancelled();
    if (auth == Authorization::Rejected) co_return refused_result(ctx.env().mode);
    if (ctx.env().on_local() && ctx.host().has_terminals()) co_return co_await run_in_terminal(ctx, command, timeout_ms);
    co_return co_await run_on_executor(ctx, command, timeout_ms);
  }

 private:
  boost::asio::awaitable<ToolResult> run_in_terminal(ToolContext& ctx, const std::string& command, std::int64_t timeout_ms) {
    auto& host = ctx.host();
    const auto& sid = ctx.env().session_id;
    std::string terminal_id;
    // In the sandbox the editor runs the helper, which confines itself and then runs bash.
    std::vector<std::string> shell_args = ctx.env().sandbox.prefix;
    shell_args.insert(shell_args.end(), {"bash", "-c", command});
    const std::string shell = shell_args.front();
    shell_args.erase(shell_args.begin());
    try {
      terminal_id = co_await host.terminal_create(sid, shell, shell_args, ctx.env().cwd.string(), kOutputLimit,
                                                    &ctx.cancel());
    } catch (const EditorError& e) {
      if (ctx.cancel().cancelled()) throw ToolCancelled();
      co_return error_result(std::string("The editor could not start the command: ") + e.what());
    }
    std::vector<ToolContent> content{TerminalContent{terminal_id}};
    ToolCallFields shown;
    shown.content = content;
    ctx.update(std::move(shown));

    // Wait for the exit, until the turn is cancelled or the timeout fires.
    support::CancelSource stop_waiting;
    bool timed_out = false;
    auto turn_reg = ctx.cancel().on_cancel([&] { stop_waiting.cancel(); });
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, std::chrono::milliseconds(timeout_ms));
    timer.async_wait([&](boost::system::error_code ec) {
      if (!ec) {
        timed_out = true;
        stop_waiting.cancel();
      }
    });
    std::optional<TerminalExit> exit;
    std::string failure;
    try {
      exit = co_await host.terminal_wait_for_exit(sid, terminal_id, &stop_waiting);
    } catch (const EditorError& e) {
      if (!stop_waiting.cancelled()) failure = e.what();
    }
    timer.cancel();
    turn_reg.reset();
    if (!exit) {
      try {
        co_await host.terminal_kill(sid, terminal_id);
      } catch (const EditorError&) {
      }
    }
    TerminalOutput out;
    try {
      out = co_await host.terminal_output(sid, terminal_id);
    } catch (const EditorError&) {
    }
    try {
      co_await host.terminal_release(sid, terminal_id);
    } catch (const EditorError&) {
    }
    if (ctx.cancel().cancelled()) throw ToolCancelled();
    if (!failure.empty()) co_return error_result("The command failed in the editor's terminal: " + failure);
    if (!exit && out.exit_status) exit = out.exit_status;
    ToolResult r;
    r.text = result_text(out.output, out.truncated, exit ? exit->exit_code : std::nullopt,
                         exit ? exit->signal : std::nullopt, timed_out, timeout_ms);
    r.is_error = timed_out || !exit || exit->exit_code.value_or(1) != 0;
    r.content = std::move(content);
    r.raw_output = json::object{{"exitCode", exit && exit->exit_code ? json::value(*exit->exit_code) : json::value(nullptr)},
                                {"output", r.text}};
    co_return r;
  }

  // Without an editor terminal, or on another executor: the output streams into the tool call
  // while the command runs (at most every kShowEvery, the last kMaxShownBytes).
  boost::asio::awaitable<ToolResult> run_on_executor(ToolContext& ctx, const std::string& command, std::int64_t timeout_ms) {
    struct Shown {
      std::string tail;
      std::chrono::steady_clock::time_point last{};
    };
    auto shown = std::make_shared<Shown>();
    RunRequest request;
    request.command = command;
    request.wrapper = ctx.env().sandbox.prefix;
    request.timeout = std::chrono::milliseconds(timeout_ms);
    request.max_output_bytes = kOutputLimit;
    request.on_output = [&ctx, shown](std::string_view chunk) {
      shown->tail.append(chunk);
      if (shown->tail.size() > kMaxShownBytes) shown->tail.erase(0, shown->tail.size() - kMaxShownBytes);
      auto now = std::chrono::steady_clock::now();
      if (now - shown->last < kShowEvery) return;
      shown->last = now;
      ToolCallFields f;
      f.content = std::vector<ToolContent>{TextContent{"```\n" + shown->tail + "\n```"}};
      ctx.update(std::move(f));
    };
    RunResult result;
    try {
      result = co_await ctx.executor().run(std::move(request), &ctx.cancel());
    } catch (const ExecutorError& e) {
      if (ctx.cancel().cancelled()) throw ToolCancelled();
      co_return error_result(e.what());
    }
    if (ctx.cancel().cancelled()) throw ToolCancelled();
    const std::string& output = result.output;
    std::optional<std::int64_t> code;
    if (result.exit_code) code = *result.exit_code;
    std::optional<std::string> sig;
    if (result.signal) sig = std::to_string(*result.signal);
    ToolResult r;
    r.text = result_text(output, result.truncated, code, sig, result.timed_out, timeout_ms);
    r.is_error = result.timed_out || code.value_or(1) != 0;
    r.content.push_back(TextContent{"```\n" + output + (output.empty() || output.back() == '\n' ? "" : "\n") + "```"});
    r.raw_output = json::object{{"exitCode", code ? json::value(*code) : json::value(nullptr)}, {"output", r.text}};
    co_return r;
  }
};

}  // namespace

std::unique_ptr<Tool> make_bash_tool() { return std::make_unique<BashTool>(); }

}  // namespace runtime::tools
