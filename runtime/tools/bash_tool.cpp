// bash: runs a shell command through the call's executor: a local child process in its own process
// group, a remote one over ssh, or on local the editor's terminal when the client offers terminals
// (the user watches it live); its output streamed into the tool call.
#include <chrono>

#include "support/json_read.hpp"
#include "runtime/tools/command_keys.hpp"
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

  // Refused before anything is asked or attempted: a files-only executor runs nothing, and a
  // sandbox that is due but impossible (no Landlock) never runs a command unconfined.
  boost::asio::awaitable<ApprovalRequest> approval(ToolContext& ctx, const json::object& args) override {
    ApprovalRequest request;
    if (support::str_at(args, "command").empty()) request.refusal = error_result("bash needs a 'command'.");
    else if (const auto& info = ctx.executor().info(); !info.can_run)
      request.refusal = error_result("Executor '" + info.id + "' (" + info.type +
                                     ") has files only: bash cannot run there. Use read_file/apply_patch on it, or run "
                                     "the command on a local or ssh executor.");
    else if (const auto& refusal = ctx.env().sandbox.refusal; !refusal.empty()) request.refusal = error_result(refusal);
    request.permission = Permission::Execute;
    // Remembered per part of the command; a line that cannot be keyed safely is never remembered.
    if (auto keys = command_keys(support::str_at(args, "command"))) {
      for (const auto& k : *keys) {
        request.keys_label += (request.keys_label.empty() ? "`" : " and `") + k + "`";
        request.keys.push_back("bash:" + k);
      }
    }
    co_return request;
  }

  boost::asio::awaitable<ToolResult> run(ToolContext& ctx, const json::object& args) override {
    std::string command(support::str_at(args, "command"));
    auto timeout_ms = std::clamp<std::int64_t>(support::int_at(args, "timeout_ms").value_or(kDefaultTimeoutMs), 1, kMaxTimeoutMs);
    co_return co_await run_on_executor(ctx, command, timeout_ms);
  }

 private:
  // The output streams into the tool call while the command runs (at most every kShowEvery, the
  // last kMaxShownBytes), or the editor's terminal shows it live.
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
    request.on_terminal = [&ctx](const std::string& terminal_id) {
      ToolCallFields f;
      f.content = std::vector<ToolContent>{TerminalContent{terminal_id}};
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
    if (!result.signal_name.empty()) sig = result.signal_name;
    ToolResult r;
    r.text = result_text(output, result.truncated, code, sig, result.timed_out, timeout_ms);
    r.is_error = result.timed_out || code.value_or(1) != 0;
    if (!result.terminal_id.empty()) r.content.push_back(TerminalContent{result.terminal_id});
    else r.content.push_back(TextContent{"```\n" + output + (output.empty() || output.back() == '\n' ? "" : "\n") + "```"});
    r.raw_output = json::object{{"exitCode", code ? json::value(*code) : json::value(nullptr)}, {"output", r.text}};
    co_return r;
  }
};

}  // namespace

std::unique_ptr<Tool> make_bash_tool() { return std::make_unique<BashTool>(); }

}  // namespace runtime::tools
