// A hook that could not run at all (issue 39.1): not found (127: the command, the script or its
// interpreter), not executable (126), not started, or not placed on its executor. On PreToolUse it
// blocks the tool call unless its on_failure is written allow (a guard that never ran is no pass);
// a hook that ran and failed keeps the old rule (an error shown, the call goes on).
#include "../../fixtures/hooks/test_support.hpp"
#include "runtime/hooks/detail.hpp"

namespace hooks_test {
namespace {

using namespace runtime::hooks::detail;

class HooksCannotRun : public HooksTest {
 protected:
  HookOutcome pre(const std::string& command, const std::string& extra = "") {
    return run_hooks(one_command("PreToolUse", command, extra), HookEvent::PreToolUse, input());
  }
  // hooks/one.yaml with one PreToolUse `script:` hook (extra: more lines of the hook).
  HookSet script_hook(const std::string& name, const std::string& extra = "") {
    yaml("one.yaml", "hooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          script: " + name + "\n" + extra);
    return load_ok();
  }
  std::string loc() const { return (hooks_dir() / "one.yaml").string() + ":4"; }
};

TEST_F(HooksCannotRun, ACommandNotFoundBlocksTheToolCall) {
  auto out = pre("/nonexistent/openvaala-guard --check");
  EXPECT_TRUE(out.blocked) << "promise: a PreToolUse guard that could not run does not let the call through";
  EXPECT_EQ(out.permission, PermissionDecision::Deny);
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_TRUE(out.errors[0].could_not_run);
  EXPECT_EQ(out.errors[0].message.rfind("could not run (exit 127: not found): ", 0), 0u) << out.errors[0].message;
  EXPECT_EQ(out.reason.rfind("hook /nonexistent/openvaala-guard --check could not run (exit 127: not found)", 0), 0u)
      << out.reason;
  EXPECT_NE(out.reason.find(", so the tool call is blocked"), std::string::npos) << out.reason;
  EXPECT_EQ(out.decided_by, loc());
}

TEST_F(HooksCannotRun, AMissingInterpreterBlocks) {
  write_text(hooks_dir() / "py9.sh", "#!/nonexistent/python9\nprint('hi')\n");
  fs::permissions(hooks_dir() / "py9.sh", fs::perms(0755));
  auto out = run_hooks(script_hook("py9.sh"), HookEvent::PreToolUse, input());
  EXPECT_TRUE(out.blocked);
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_TRUE(out.errors[0].could_not_run);
  EXPECT_EQ(out.errors[0].message.rfind("could not run (exit 127: not found)", 0), 0u) << out.errors[0].message;
}

TEST_F(HooksCannotRun, AScriptThatLostItsExecuteBitBlocks) {
  const auto src = script("true.sh");
  auto set = script_hook("true.sh");
  fs::permissions(src, fs::perms(0644));  // after loading: the copy keeps the mode, bash answers 126
  auto out = run_hooks(set, HookEvent::PreToolUse, input());
  EXPECT_TRUE(out.blocked);
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].message.rfind("could not run (exit 126: not executable)", 0), 0u) << out.errors[0].message;
}

TEST_F(HooksCannotRun, ADeletedScriptBlocks) {
  const auto src = script("true.sh");
  auto set = script_hook("true.sh");
  fs::remove(src);
  auto out = run_hooks(set, HookEvent::PreToolUse, input());
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.errors.at(0).message, "could not start: script " + src.string() + " no longer exists");
  EXPECT_EQ(out.reason, "hook true.sh could not start: script " + src.string() + " no longer exists, so the tool call is blocked");
}

TEST_F(HooksCannotRun, TheHooksAfterABlockingOneDoNotRun) {
  yaml("one.yaml", "hooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          command: /nonexistent/guard\n"
                   "        - type: command\n          command: touch " + (root_ / "second-ran").string() + "\n");
  auto out = run_hooks(load_ok(), HookEvent::PreToolUse, input());
  EXPECT_TRUE(out.blocked);
  EXPECT_FALSE(fs::exists(root_ / "second-ran"));
}

TEST_F(HooksCannotRun, WrittenOnFailureAllowLetsTheCallGoOnAndStillReports) {
  auto out = pre("/nonexistent/openvaala-logger", "on_failure: allow");
  EXPECT_FALSE(out.blocked);
  EXPECT_EQ(out.permission, PermissionDecision::None);
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_TRUE(out.errors[0].could_not_run) << "the editor still shows it as a hook that could not run";
}

TEST_F(HooksCannotRun, AHookThatRanAndFailedStillLetsTheCallGoOn) {
  for (const char* command : {"exit 1", "exit 3", "exit 125", "kill -9 $$"}) {
    auto out = pre(command);
    EXPECT_FALSE(out.blocked) << command;
    ASSERT_EQ(out.errors.size(), 1u) << command;
    EXPECT_FALSE(out.errors[0].could_not_run) << command;
  }
  auto out = pre("sleep 30", "timeout: 0.3");
  EXPECT_FALSE(out.blocked) << "a timeout: the hook ran";
  EXPECT_FALSE(out.errors.at(0).could_not_run);
}

TEST_F(HooksCannotRun, OnlyPreToolUseFailsClosedByDefault) {
  auto set = one_command("UserPromptSubmit", "/nonexistent/openvaala-guard");
  auto out = run_hooks(set, HookEvent::UserPromptSubmit, input());
  EXPECT_FALSE(out.blocked);
  EXPECT_TRUE(out.errors.at(0).could_not_run);
  set = one_command("PostToolUse", "/nonexistent/openvaala-guard");
  out = run_hooks(set, HookEvent::PostToolUse, input());
  EXPECT_FALSE(out.blocked) << "the tool ran already";
}

TEST_F(HooksCannotRun, AnExecutorThatCannotRunItBlocks) {
  HookPlace place;
  place.executor = "box";
  place.refusal = "executor 'box' (ssh me@box): cannot connect: connection refused";
  auto out = run_hooks(one_command("PreToolUse", "true"), HookEvent::PreToolUse, input(), nullptr, &place);
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.errors.at(0).message, "could not start: executor 'box' (ssh me@box): cannot connect: connection refused");
  EXPECT_TRUE(out.errors.at(0).could_not_run);
}

TEST_F(HooksCannotRun, AScriptNotCopiedToItsExecutorBlocks) {
  const auto src = script("true.sh");
  auto set = script_hook("true.sh");
  HookPlace place;
  place.executor = "box";
  place.launch = [](const std::string& line, const auto&) { return std::vector<std::string>{"bash", "-c", line}; };
  place.copy_errors[src] = "executor 'box': cannot copy true.sh there: disk full";
  auto out = run_hooks(set, HookEvent::PreToolUse, input(), nullptr, &place);
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.errors.at(0).message, "could not start: executor 'box': cannot copy true.sh there: disk full");
}

TEST(HookAnswerCannotRun, ExitCodes127And126MeanItNeverRan) {
  HookProcessResult r;
  for (int code : {127, 126}) {
    r.exit_code = code;
    r.stderr_data = "bash: line 1: /x: whatever\n";
    auto a = interpret_hook_result(HookEvent::PreToolUse, r, std::chrono::seconds(60));
    EXPECT_TRUE(a.error);
    EXPECT_TRUE(a.could_not_run) << code;
    EXPECT_EQ(a.error_message, "could not run (exit " + std::to_string(code) + ": " +
                                   (code == 127 ? "not found" : "not executable") + "): bash: line 1: /x: whatever");
  }
  for (int code : {1, 125, 128, 255}) {
    r.exit_code = code;
    EXPECT_FALSE(interpret_hook_result(HookEvent::PreToolUse, r, std::chrono::seconds(60)).could_not_run) << code;
  }
  HookProcessResult s;
  s.spawn_error = "cannot execute 'bash': No such file or directory";
  EXPECT_TRUE(interpret_hook_result(HookEvent::PreToolUse, s, std::chrono::seconds(60)).could_not_run);
}

}  // namespace
}  // namespace hooks_test
