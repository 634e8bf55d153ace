// Conformance: running hooks (seed "输入和输出" and "Hook 字段"): stdin, cwd, env, every kind of
// answer on every event, on_failure, timeouts (the whole process group dies), the 64 KB cut,
// the script cache, and how several hooks combine. Real processes throughout.
#include <signal.h>

#include <thread>

#include "../../fixtures/hooks/test_support.hpp"
#include "runtime/hooks/detail.hpp"

namespace hooks_test {
namespace {

using namespace runtime::hooks::detail;
using ::testing::ElementsAre;
namespace json = boost::json;

std::string print_json(const std::string& j) { return "printf '%s' " + shell_quote(j); }

class HooksRun : public HooksTest {
 protected:
  HookOutcome answer(HookEvent ev, const std::string& command, const std::string& extra = "") {
    auto set = one_command(std::string(to_string(ev)), command, extra);
    EXPECT_EQ(set.hooks.size(), 1u);
    return run_hooks(set, ev, input());
  }
  std::string loc(int line, const std::string& name = "one.yaml") const {
    return (hooks_dir() / name).string() + ":" + std::to_string(line);
  }
};

const HookEvent kBlockable[] = {HookEvent::UserPromptSubmit, HookEvent::PreToolUse, HookEvent::PostToolUse,
                                HookEvent::Stop, HookEvent::SubagentStop};

// ---------- stdin, cwd, environment ----------

TEST_F(HooksRun, StdinJsonPerEvent) {
  script("save_stdin.sh");
  std::string text = "hooks:\n";
  for (HookEvent ev : kAllHookEvents)
    text += "  " + std::string(to_string(ev)) + ":\n    - hooks:\n        - type: command\n          script: save_stdin.sh\n"
            "          args: [" + (root_ / (std::string(to_string(ev)) + ".json")).string() + "]\n";
  yaml("all.yaml", text);
  auto set = load_ok();
  auto in = input();
  in.tool_response = json::object{{"exit_code", 0}};
  in.stop_hook_active = true;
  in.last_assistant_message = "done";
  in.source = "resume";
  for (HookEvent ev : kAllHookEvents) {
    auto sub = in;
    if (ev == HookEvent::SubagentStart || ev == HookEvent::SubagentStop) {
      sub.agent_id = "agent-7";
      sub.agent_type = "reviewer";
    }
    auto out = run_hooks(set, ev, sub);
    EXPECT_TRUE(out.errors.empty()) << out.errors.front().to_string();
  }
  auto read = [&](const char* ev) { return json::parse(read_text(root_ / (std::string(ev) + ".json"))).as_object(); };
  const json::object common{{"session_id", "sess-1"}, {"turn_id", "turn-1"}, {"cwd", cwd_.string()}};
  auto with = [&](const char* ev, json::object extra) {
    json::object o = common;
    o["hook_event_name"] = ev;
    for (auto& kv : extra) o[kv.key()] = kv.value();
    return o;
  };
  EXPECT_EQ(read("SessionStart"), with("SessionStart", {{"source", "resume"}}));
  EXPECT_EQ(read("UserPromptSubmit"), with("UserPromptSubmit", {{"prompt", "hello"}}));
  EXPECT_EQ(read("PreToolUse"), with("PreToolUse", {{"tool_name", "bash"}, {"tool_input", {{"command", "ls"}}}, {"tool_use_id", "call-1"}}));
  EXPECT_EQ(read("PostToolUse"), with("PostToolUse", {{"tool_name", "bash"}, {"tool_input", {{"command", "ls"}}},
                                                      {"tool_use_id", "call-1"}, {"tool_response", {{"exit_code", 0}}}}));
  EXPECT_EQ(read("Stop"), with("Stop", {{"stop_hook_active", true}, {"last_assistant_message", "done"}}));
  EXPECT_EQ(read("SubagentStart"), with("SubagentStart", {{"agent_id", "agent-7"}, {"agent_type", "reviewer"}}));
  EXPECT_EQ(read("SubagentStop"), with("SubagentStop", {{"stop_hook_active", true}, {"last_assistant_message", "done"},
                                                        {"agent_id", "agent-7"}, {"agent_type", "reviewer"}}));
  // cwd = the session's working directory
  EXPECT_EQ(read_text(root_ / "PreToolUse.json.cwd"), cwd_.string() + "\n");
}

TEST_F(HooksRun, HookInsideASubagentGetsAgentFields) {
  auto in = input();
  in.agent_id = "a1";
  in.agent_type = "explorer";
  auto o = hook_stdin_json(HookEvent::PreToolUse, in);
  EXPECT_EQ(o.at("agent_id"), "a1");
  EXPECT_EQ(o.at("agent_type"), "explorer");
  EXPECT_FALSE(hook_stdin_json(HookEvent::PreToolUse, input()).contains("agent_id"));
}

TEST_F(HooksRun, CommandRunsThroughBashC) {
  // bash-only syntax ([[ ]], arrays) proves bash, not sh
  auto out = answer(HookEvent::UserPromptSubmit, "a=(x y); [[ ${a[1]} == y ]] && echo \"bash $(basename \"$PWD\")\"");
  EXPECT_THAT(out.additional_context, ElementsAre("bash work"));
}

TEST_F(HooksRun, ScriptArgsAreShellEscaped) {
  script("print_args.sh");
  yaml("one.yaml", "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - type: command\n          script: print_args.sh\n"
                   "          args: [\"two words\", \"it's\", \"$HOME\", \"`id`\", \";\", \"\"]\n");
  auto out = run_hooks(load_ok(), HookEvent::UserPromptSubmit, input());
  EXPECT_THAT(out.additional_context, ElementsAre("<two words>\n<it's>\n<$HOME>\n<`id`>\n<;>\n<>"));
}

TEST_F(HooksRun, PluginHooksGetPluginRootInTheEnvironment) {
  PluginHookSource p;
  p.plugin_name = "review";
  p.plugin_root = root_ / "plugins" / "review";
  p.manifest_file = p.plugin_root / ".openvaala-plugin" / "plugin.yaml";
  script("plugin_root.sh", p.plugin_root / "hooks");
  write_text(p.plugin_root / "core.md", "core rules");
  p.hooks = YAML::Load("UserPromptSubmit:\n  - hooks:\n      - type: command\n        script: hooks/plugin_root.sh\n"
                       "      - type: command\n        command: cat \"${OPENVAALA_PLUGIN_ROOT}/core.md\"\n");
  script("plugin_root.sh");  // the same script as a user hook: no plugin root
  yaml("u.yaml", "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - type: command\n          script: plugin_root.sh\n");
  auto out = run_hooks(load_ok({p}), HookEvent::UserPromptSubmit, input());
  EXPECT_THAT(out.additional_context,
              ElementsAre("root=unset", "root=" + p.plugin_root.string(), "core rules"));
}

// ---------- exit 0 ----------

TEST_F(HooksRun, ExitZeroEmptyStdoutAllowsOnEveryEvent) {
  for (HookEvent ev : kAllHookEvents) {
    auto out = answer(ev, "echo 'only for the log' >&2; exit 0");
    EXPECT_FALSE(out.blocked) << to_string(ev);
    EXPECT_TRUE(out.additional_context.empty());
    EXPECT_TRUE(out.errors.empty());
    EXPECT_EQ(out.permission, PermissionDecision::None);
    ASSERT_EQ(out.runs.size(), 1u);
    EXPECT_EQ(out.runs[0].status, HookRunRecord::Status::Ok);
    EXPECT_EQ(out.runs[0].exit_code, 0);
  }
}

TEST_F(HooksRun, PlainTextIsContextOnlyOnSessionStartSubagentStartUserPromptSubmit) {
  for (HookEvent ev : kAllHookEvents) {
    auto out = answer(ev, "echo 'remember: tabs'");
    const bool context = ev == HookEvent::SessionStart || ev == HookEvent::SubagentStart || ev == HookEvent::UserPromptSubmit;
    if (context) EXPECT_THAT(out.additional_context, ElementsAre("remember: tabs")) << to_string(ev);
    else EXPECT_TRUE(out.additional_context.empty()) << to_string(ev);
    EXPECT_FALSE(out.blocked);
    EXPECT_TRUE(out.errors.empty());
  }
}

TEST_F(HooksRun, TextBeforeJsonIsPlainText) {
  auto out = answer(HookEvent::Stop, "echo 'Shell ready'; " + print_json(R"({"decision":"block","reason":"x"})"));
  EXPECT_FALSE(out.blocked);
  EXPECT_TRUE(out.errors.empty());
}

TEST_F(HooksRun, JsonArrayIsPlainText) {
  // Only output starting with '{' is JSON.
  auto out = answer(HookEvent::UserPromptSubmit, print_json("[1,2]"));
  EXPECT_THAT(out.additional_context, ElementsAre("[1,2]"));
  EXPECT_TRUE(out.errors.empty());
}

TEST_F(HooksRun, InvalidJsonIsAHookError) {
  auto out = answer(HookEvent::PostToolUse, print_json("{bad json"));
  EXPECT_FALSE(out.blocked);
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].hook, loc(4));
  EXPECT_EQ(out.errors[0].to_string().rfind(loc(4) + ": printed invalid JSON on stdout: ", 0), 0u) << out.errors[0].to_string();
  EXPECT_EQ(out.runs[0].status, HookRunRecord::Status::Error);
}

// ---------- exit 2 ----------

TEST_F(HooksRun, ExitTwoBlocksWithStderrAsReason) {
  for (HookEvent ev : kBlockable) {
    auto out = answer(ev, "echo 'ignored stdout'; echo 'rm -rf is not allowed' >&2; exit 2");
    EXPECT_TRUE(out.blocked) << to_string(ev);
    EXPECT_EQ(out.reason, "rm -rf is not allowed");
    EXPECT_EQ(out.decided_by, loc(4));
    EXPECT_TRUE(out.errors.empty());
    EXPECT_EQ(out.runs[0].status, HookRunRecord::Status::Blocked);
    EXPECT_EQ(out.permission, ev == HookEvent::PreToolUse ? PermissionDecision::Deny : PermissionDecision::None);
  }
}

TEST_F(HooksRun, ExitTwoWithEmptyStderrStillBlocks) {
  auto out = answer(HookEvent::PreToolUse, "exit 2");
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.reason, "blocked by hook exit 2 (" + loc(4) + ")");
}

TEST_F(HooksRun, ExitTwoWithJsonAllowStillBlocks) {
  auto out = answer(HookEvent::PreToolUse,
                    print_json(R"({"hookSpecificOutput":{"permissionDecision":"allow"}})") + "; echo no >&2; exit 2");
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.reason, "no");
}

TEST_F(HooksRun, ExitTwoIsAnErrorOnSessionStartAndSubagentStart) {
  for (HookEvent ev : {HookEvent::SessionStart, HookEvent::SubagentStart}) {
    auto out = answer(ev, "echo nope >&2; exit 2");
    EXPECT_FALSE(out.blocked);
    ASSERT_EQ(out.errors.size(), 1u);
    EXPECT_EQ(out.errors[0].to_string(),
              loc(4) + ": exited with code 2, but " + std::string(to_string(ev)) + " hooks cannot block: nope");
  }
}

// ---------- other exit codes, timeouts, on_failure ----------

TEST_F(HooksRun, OtherExitCodesAreHookErrors) {
  auto out = answer(HookEvent::PreToolUse, "echo broken >&2; exit 1");
  EXPECT_FALSE(out.blocked);
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].to_string(), loc(4) + ": exited with code 1: broken");
  EXPECT_EQ(out.runs[0].exit_code, 1);
  out = answer(HookEvent::Stop, "no-such-command-xyz");
  EXPECT_EQ(out.errors.at(0).message.rfind("could not run (exit 127: not found): ", 0), 0u);
  EXPECT_TRUE(out.errors.at(0).could_not_run);
  EXPECT_FALSE(out.blocked) << "Stop: an error never blocks";
}

TEST_F(HooksRun, NonZeroExitIgnoresJson) {
  // Pinned (seed): any exit code but 0 and 2 is a hook error, whatever stdout says.
  auto out = answer(HookEvent::PreToolUse,
                    print_json(R"({"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}})") + "; exit 1");
  EXPECT_FALSE(out.blocked);
  EXPECT_EQ(out.errors.size(), 1u);
}

TEST_F(HooksRun, OnFailureBlockTurnsErrorsIntoBlocks) {
  for (HookEvent ev : {HookEvent::PreToolUse, HookEvent::UserPromptSubmit}) {
    auto out = answer(ev, "exit 3", "on_failure: block");
    EXPECT_TRUE(out.blocked) << to_string(ev);
    EXPECT_EQ(out.reason, "hook exit 3 failed (exited with code 3), and its on_failure is block");
    EXPECT_EQ(out.errors.size(), 1u);
    EXPECT_EQ(out.decided_by, loc(4));
    out = answer(ev, print_json("{nope"), "on_failure: block");
    EXPECT_TRUE(out.blocked);
    out = answer(ev, "exit 3", "on_failure: allow");
    EXPECT_FALSE(out.blocked);
    EXPECT_EQ(out.errors.size(), 1u);
  }
}

TEST_F(HooksRun, TimeoutIsAHookError) {
  auto t0 = std::chrono::steady_clock::now();
  auto out = answer(HookEvent::PreToolUse, "echo partial; sleep 30", "timeout: 1");
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_FALSE(out.blocked);
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].to_string(), loc(4) + ": timed out after 1 s");
  EXPECT_TRUE(out.runs[0].timed_out);
  out = answer(HookEvent::PreToolUse, "sleep 30", "timeout: 1\n          on_failure: block");
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.reason, "hook sleep 30 failed (timed out after 1 s), and its on_failure is block");
}

TEST_F(HooksRun, FractionalTimeoutKillsTheHookInTime) {
  // timeout: 0.5 (seconds, the seed allows any positive number): the hook dies after half a second.
  auto t0 = std::chrono::steady_clock::now();
  auto out = answer(HookEvent::PreToolUse, "sleep 30", "timeout: 0.5");
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, std::chrono::milliseconds(450)) << "the hook had its half second";
  EXPECT_LT(took, std::chrono::milliseconds(2500)) << "a 0.5 s timeout ends the hook well before a whole second or more";
  ASSERT_EQ(out.errors.size(), 1u) << "the timed-out hook is a hook error";
  EXPECT_EQ(out.errors[0].to_string(), loc(4) + ": timed out after 0.5 s");
  EXPECT_TRUE(out.runs[0].timed_out);
}

bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  // A zombie waiting for its (re)parent to reap it is dead too.
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

TEST_F(HooksRun, TimeoutKillsTheWholeProcessGroup) {
  script("spawn_and_hang.sh");
  const fs::path pid_file = root_ / "grandchild.pid";
  yaml("one.yaml", "hooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: spawn_and_hang.sh\n"
                   "          args: [" + pid_file.string() + "]\n          timeout: 1\n");
  auto out = run_hooks(load_ok(), HookEvent::Stop, input());
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].message, "timed out after 1 s");
  const pid_t grandchild = std::stoi(read_text(pid_file));
  ASSERT_GT(grandchild, 1);
  bool gone = false;
  for (int i = 0; i < 40 && !gone; ++i) {
    gone = process_gone(grandchild);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " survived the timeout";
}

TEST_F(HooksRun, CancelKillsTheRunningHook) {
  auto set = one_command("Stop", "sleep 30");
  std::atomic<bool> cancel{false};
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  auto out = run_hooks(set, HookEvent::Stop, input(), &cancel);
  t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs[0].message, "cancelled");
  EXPECT_FALSE(out.blocked);
}

// ---------- 64 KB cut ----------

TEST_F(HooksRun, StdoutAndStderrAreCutAt64KB) {
  script("big_output.sh");
  yaml("one.yaml", "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - type: command\n          script: big_output.sh\n");
  auto out = run_hooks(load_ok(), HookEvent::UserPromptSubmit, input());
  ASSERT_EQ(out.additional_context.size(), 1u);
  EXPECT_EQ(out.additional_context[0], std::string(64 * 1024, 'a'));

  yaml("one.yaml", "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - type: command\n          script: big_output.sh\n"
                   "          args: ['2']\n");
  out = run_hooks(load_ok(), HookEvent::UserPromptSubmit, input());
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.reason, std::string(64 * 1024, 'b'));
}

// ---------- JSON answers ----------

TEST_F(HooksRun, DecisionBlockOnItsFourEvents) {
  for (HookEvent ev : {HookEvent::UserPromptSubmit, HookEvent::PostToolUse, HookEvent::Stop, HookEvent::SubagentStop}) {
    auto out = answer(ev, print_json(R"({"decision":"block","reason":"run the tests first"})"));
    EXPECT_TRUE(out.blocked) << to_string(ev);
    EXPECT_EQ(out.reason, "run the tests first");
    EXPECT_EQ(out.decided_by, loc(4));
    EXPECT_TRUE(out.errors.empty());
  }
}

TEST_F(HooksRun, DecisionBlockCannotBlockSessionStartOrSubagentStart) {
  for (HookEvent ev : {HookEvent::SessionStart, HookEvent::SubagentStart}) {
    auto out = answer(ev, print_json(R"({"decision":"block","reason":"x"})"));
    EXPECT_FALSE(out.blocked);
    ASSERT_EQ(out.errors.size(), 1u);
    EXPECT_EQ(out.errors[0].message, "printed invalid output: decision \"block\" is not possible on " + std::string(to_string(ev)));
  }
}

TEST_F(HooksRun, DecisionOtherThanBlockIsAnError) {
  auto out = answer(HookEvent::Stop, print_json(R"({"decision":"approve"})"));
  EXPECT_FALSE(out.blocked);
  EXPECT_EQ(out.errors.at(0).message, "printed invalid output: decision must be \"block\"");
}

TEST_F(HooksRun, DecisionBlockWithoutReasonBlocksWithADefaultReason) {
  auto out = answer(HookEvent::Stop, print_json(R"({"decision":"block"})"));
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.reason, "blocked by hook " + print_json(R"({"decision":"block"})") + " (" + loc(4) + ")");
}

TEST_F(HooksRun, PermissionDecisionDeny) {
  auto out = answer(HookEvent::PreToolUse, print_json(
      R"({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}})"));
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.permission, PermissionDecision::Deny);
  EXPECT_EQ(out.reason, "no");
  EXPECT_EQ(out.permission_reason, "no");
  EXPECT_EQ(out.decided_by, loc(4));
}

TEST_F(HooksRun, DenyWithBlankReasonStillBlocks) {
  // Pinned: a deny is never dropped for want of a reason (Codex would fail open here).
  auto out = answer(HookEvent::PreToolUse,
                    print_json(R"({"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"  "}})"));
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.reason.rfind("blocked by hook ", 0), 0u) << out.reason;
}

TEST_F(HooksRun, IdenticalHooksInTwoFilesBothRun) {
  // Pinned: no de-duplication (Codex keeps duplicates; Claude Code merges them).
  const auto log = (root_ / "dup.log").string();
  const std::string text = "hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: 'echo x >> " + log + "'\n";
  yaml("a.yaml", text);
  yaml("b.yaml", text);
  auto out = run_hooks(load_ok(), HookEvent::Stop, input());
  EXPECT_EQ(out.runs.size(), 2u);
  EXPECT_EQ(read_text(log), "x\nx\n");
}

TEST_F(HooksRun, PermissionDecisionAllow) {
  auto out = answer(HookEvent::PreToolUse,
                    print_json(R"({"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"safe"}})"));
  EXPECT_FALSE(out.blocked);
  EXPECT_EQ(out.permission, PermissionDecision::Allow);
  EXPECT_EQ(out.permission_reason, "safe");
  EXPECT_EQ(out.decided_by, loc(4));
}

TEST_F(HooksRun, PermissionDecisionAskAndDeferAreErrors) {
  for (std::string d : {"ask", "defer"}) {
    auto out = answer(HookEvent::PreToolUse, print_json(R"({"hookSpecificOutput":{"permissionDecision":")" + d + "\"}}"));
    EXPECT_FALSE(out.blocked);
    EXPECT_EQ(out.permission, PermissionDecision::None);
    ASSERT_EQ(out.errors.size(), 1u);
    EXPECT_EQ(out.errors[0].message,
              "printed invalid output: permissionDecision \"" + d + "\" is not supported (use \"allow\" or \"deny\")");
    out = answer(HookEvent::PreToolUse, print_json(R"({"hookSpecificOutput":{"permissionDecision":")" + d + "\"}}"),
                 "on_failure: block");
    EXPECT_TRUE(out.blocked);
  }
}

TEST_F(HooksRun, UpdatedInputReplacesToolArguments) {
  auto out = answer(HookEvent::PreToolUse,
                    print_json(R"({"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"echo hi"}}})"));
  ASSERT_TRUE(out.updated_input);
  EXPECT_EQ(*out.updated_input, (json::object{{"command", "echo hi"}}));
  EXPECT_FALSE(out.blocked);
  // Without a permission decision too.
  out = answer(HookEvent::PreToolUse, print_json(R"({"hookSpecificOutput":{"updatedInput":{"command":"pwd"}}})"));
  ASSERT_TRUE(out.updated_input);
  EXPECT_EQ(*out.updated_input, (json::object{{"command", "pwd"}}));
  EXPECT_EQ(out.decided_by, loc(4));
}

TEST_F(HooksRun, UpdatedInputOnlyOnPreToolUse) {
  auto out = answer(HookEvent::PostToolUse, print_json(R"({"hookSpecificOutput":{"updatedInput":{"command":"pwd"}}})"));
  EXPECT_FALSE(out.updated_input);
  EXPECT_TRUE(out.errors.empty());
}

TEST_F(HooksRun, UpdatedInputMustBeAnObject) {
  auto out = answer(HookEvent::PreToolUse, print_json(R"({"hookSpecificOutput":{"updatedInput":"rm -rf /"}})"));
  EXPECT_FALSE(out.updated_input);
  EXPECT_EQ(out.errors.at(0).message,
            "printed invalid output: hookSpecificOutput.updatedInput must be an object (the tool's arguments)");
}

TEST_F(HooksRun, AdditionalContextTopLevelAndHookSpecific) {
  for (HookEvent ev : kAllHookEvents) {
    auto out = answer(ev, print_json(R"({"additionalContext":"top","hookSpecificOutput":{"hookEventName":"x","additionalContext":"specific"}})"));
    EXPECT_THAT(out.additional_context, ElementsAre("top", "specific")) << to_string(ev);
  }
  // The seed's PostToolUse formatter example.
  auto out = answer(HookEvent::PostToolUse,
                    print_json(R"({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "gofmt reformatted main.go"}})"));
  EXPECT_THAT(out.additional_context, ElementsAre("gofmt reformatted main.go"));
}

TEST_F(HooksRun, ContinueFalseEndsTheTurn) {
  for (HookEvent ev : kAllHookEvents) {
    auto out = answer(ev, print_json(R"({"continue":false,"stopReason":"budget exhausted"})"));
    EXPECT_TRUE(out.stop_turn) << to_string(ev);
    EXPECT_EQ(out.stop_reason, "budget exhausted");
    EXPECT_FALSE(out.blocked);
    EXPECT_EQ(out.decided_by, loc(4));
    EXPECT_EQ(out.runs[0].status, HookRunRecord::Status::StoppedTurn);
  }
  auto out = answer(HookEvent::Stop, print_json(R"({"continue":true})"));
  EXPECT_FALSE(out.stop_turn);
  out = answer(HookEvent::Stop, print_json(R"({"continue":"no"})"));
  EXPECT_EQ(out.errors.at(0).message, "printed invalid output: continue must be true or false");
}

TEST_F(HooksRun, SystemMessageIsForTheUserNotTheModel) {
  auto out = answer(HookEvent::PostToolUse, print_json(R"({"systemMessage":"formatted 3 files"})"));
  EXPECT_THAT(out.system_messages, ElementsAre("formatted 3 files"));
  EXPECT_TRUE(out.additional_context.empty());
}

TEST_F(HooksRun, WrongFieldTypesAreHookErrors) {
  auto out = answer(HookEvent::Stop, print_json(R"({"systemMessage":1,"hookSpecificOutput":[]})"));
  EXPECT_EQ(out.errors.at(0).message,
            "printed invalid output: systemMessage must be a string; hookSpecificOutput must be an object");
  EXPECT_TRUE(out.system_messages.empty());
}

TEST_F(HooksRun, UnknownFieldsAreIgnored) {
  auto out = answer(HookEvent::PostToolUse, print_json(R"({"suppressOutput":true,"x":{"y":1}})"));
  EXPECT_TRUE(out.errors.empty());
  EXPECT_FALSE(out.blocked);
}

TEST(HookAnswerPure, InterpretWithoutProcesses) {
  HookProcessResult r;
  r.exit_code = 0;
  r.stdout_data = "  \n{\"systemMessage\":\"hi\"}\n";
  auto a = interpret_hook_result(HookEvent::Stop, r, std::chrono::seconds(60));
  EXPECT_FALSE(a.error);
  EXPECT_EQ(a.system_message, "hi");
  r.exit_code.reset();
  r.term_signal = 9;
  a = interpret_hook_result(HookEvent::Stop, r, std::chrono::seconds(60));
  EXPECT_EQ(a.error_message, "was killed by signal 9");
  HookProcessResult s;
  s.spawn_error = "cannot execute 'bash': No such file or directory";
  a = interpret_hook_result(HookEvent::Stop, s, std::chrono::seconds(60));
  EXPECT_EQ(a.error_message, "could not start: cannot execute 'bash': No such file or directory");
}

// ---------- several hooks ----------

TEST_F(HooksRun, HooksRunInOrderFilesThenPluginsByName) {
  script("append_marker.sh");
  const auto log = (root_ / "order.log").string();
  auto entry = [&](const std::string& name) {
    return "        - type: command\n          script: append_marker.sh\n          args: [" + name + ", " + log + "]\n";
  };
  yaml("b.yaml", "hooks:\n  Stop:\n    - hooks:\n" + entry("b"));
  yaml("a.yaml", "hooks:\n  Stop:\n    - hooks:\n" + entry("a1") + entry("a2"));
  auto plugin = [&](const std::string& name) {
    PluginHookSource p;
    p.plugin_name = name;
    p.plugin_root = root_ / "plugins" / name;
    p.manifest_file = p.plugin_root / ".openvaala-plugin" / "plugin.yaml";
    p.hooks = YAML::Load("Stop:\n  - hooks:\n      - type: command\n        command: echo " + name + " >> " + log + "\n");
    return p;
  };
  auto out = run_hooks(load_ok({plugin("zeta"), plugin("alpha")}), HookEvent::Stop, input());
  EXPECT_EQ(read_text(log), "a1\na2\nb\nalpha\nzeta\n");
  EXPECT_EQ(out.runs.size(), 5u);
}

TEST_F(HooksRun, FirstBlockWinsAndLaterHooksDoNotRun) {
  const auto marker = root_ / "later.ran";
  yaml("one.yaml", "hooks:\n  PreToolUse:\n    - hooks:\n"
                   "        - type: command\n          command: " + quote(print_json(R"({"systemMessage":"first"})")) + "\n"
                   "        - type: command\n          command: 'echo second >&2; exit 2'\n"
                   "        - type: command\n          command: 'echo third >&2; exit 2'\n"
                   "        - type: command\n          command: 'touch " + marker.string() + "'\n");
  auto out = run_hooks(load_ok(), HookEvent::PreToolUse, input());
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.reason, "second");
  EXPECT_EQ(out.decided_by, loc(6));
  EXPECT_EQ(out.decided_by_label, "echo second >&2; exit 2");
  EXPECT_THAT(out.system_messages, ElementsAre("first"));
  EXPECT_EQ(out.runs.size(), 2u);
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(HooksRun, AllowThenDenyDenyWins) {
  yaml("one.yaml", "hooks:\n  PreToolUse:\n    - hooks:\n"
                   "        - type: command\n          command: " + quote(print_json(R"({"hookSpecificOutput":{"permissionDecision":"allow"}})")) + "\n"
                   "        - type: command\n          command: " + quote(print_json(R"({"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}})")) + "\n");
  auto out = run_hooks(load_ok(), HookEvent::PreToolUse, input());
  EXPECT_TRUE(out.blocked);
  EXPECT_EQ(out.permission, PermissionDecision::Deny);
  EXPECT_EQ(out.decided_by, loc(6));
}

TEST_F(HooksRun, LaterHookSeesEarlierUpdatedInputLastWins) {
  script("save_stdin.sh");
  const auto seen = root_ / "seen.json";
  yaml("one.yaml", "hooks:\n  PreToolUse:\n    - hooks:\n"
                   "        - type: command\n          command: " + quote(print_json(R"({"hookSpecificOutput":{"updatedInput":{"command":"echo one"}}})")) + "\n"
                   "        - type: command\n          script: save_stdin.sh\n          args: [" + seen.string() + "]\n"
                   "        - type: command\n          command: " + quote(print_json(R"({"hookSpecificOutput":{"updatedInput":{"command":"echo two"}}})")) + "\n");
  auto out = run_hooks(load_ok(), HookEvent::PreToolUse, input());
  EXPECT_EQ(json::parse(read_text(seen)).at("tool_input"), (json::object{{"command", "echo one"}}));
  ASSERT_TRUE(out.updated_input);
  EXPECT_EQ(*out.updated_input, (json::object{{"command", "echo two"}}));
  EXPECT_EQ(out.runs.size(), 3u);
}

TEST_F(HooksRun, ContinueFalseStopsLaterHooks) {
  yaml("one.yaml", "hooks:\n  PostToolUse:\n    - hooks:\n"
                   "        - type: command\n          command: " + quote(print_json(R"({"continue":false,"stopReason":"enough"})")) + "\n"
                   "        - type: command\n          command: 'echo x >&2; exit 2'\n");
  auto out = run_hooks(load_ok(), HookEvent::PostToolUse, input());
  EXPECT_TRUE(out.stop_turn);
  EXPECT_FALSE(out.blocked);
  EXPECT_EQ(out.runs.size(), 1u);
}

TEST_F(HooksRun, ErrorsDoNotStopLaterHooksAndNameTheirHook) {
  yaml("one.yaml", "hooks:\n  UserPromptSubmit:\n    - hooks:\n"
                   "        - type: command\n          command: 'exit 5'\n"
                   "        - type: command\n          command: 'echo ctx'\n");
  auto out = run_hooks(load_ok(), HookEvent::UserPromptSubmit, input());
  EXPECT_THAT(out.additional_context, ElementsAre("ctx"));
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].to_string(), loc(4) + ": exited with code 5");
}

// ---------- script cache ----------

class HooksCache : public HooksRun {
 protected:
  fs::path cached_copy() {
    std::vector<fs::path> found;
    if (fs::exists(cache_ / "hooks"))
      for (auto& e : fs::recursive_directory_iterator(cache_ / "hooks"))
        if (e.is_regular_file() && e.path().filename() == "version.sh") found.push_back(e.path());
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? fs::path() : found[0];
  }
};

TEST_F(HooksCache, ScriptIsCopiedAndRecopiedOnlyWhenContentOrModeChanges) {
  const auto src = script("version.sh");
  yaml("one.yaml", "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - type: command\n          script: version.sh\n");
  auto set = load_ok();

  auto out = run_hooks(set, HookEvent::UserPromptSubmit, input());
  EXPECT_THAT(out.additional_context, ElementsAre("v1"));
  const fs::path copy = cached_copy();
  EXPECT_EQ(copy.filename(), "version.sh");
  EXPECT_EQ(copy.parent_path().parent_path(), cache_ / "hooks");  // <cache>/hooks/<hash>/<file name>
  EXPECT_EQ(copy.parent_path().filename().string().size(), 16u);
  struct stat st1 {};
  ASSERT_EQ(::stat(copy.c_str(), &st1), 0);

  // Unchanged: not copied again (same inode, same mtime).
  out = run_hooks(set, HookEvent::UserPromptSubmit, input());
  struct stat st2 {};
  ASSERT_EQ(::stat(copy.c_str(), &st2), 0);
  EXPECT_EQ(st1.st_ino, st2.st_ino);

  // Content changed: the next run uses it, no reload needed.
  write_text(src, "#!/usr/bin/env bash\ncat >/dev/null\necho v2\n");
  out = run_hooks(set, HookEvent::UserPromptSubmit, input());
  EXPECT_THAT(out.additional_context, ElementsAre("v2"));
  struct stat st3 {};
  ASSERT_EQ(::stat(copy.c_str(), &st3), 0);
  EXPECT_NE(st3.st_ino, st2.st_ino);
  EXPECT_EQ(read_text(copy), read_text(src));

  // Mode changed (same content): recopied with the new mode.
  fs::permissions(src, fs::perms(0700));
  out = run_hooks(set, HookEvent::UserPromptSubmit, input());
  struct stat st4 {};
  ASSERT_EQ(::stat(copy.c_str(), &st4), 0);
  EXPECT_NE(st4.st_ino, st3.st_ino);
  EXPECT_EQ(st4.st_mode & 07777, 0700u);
  EXPECT_THAT(out.additional_context, ElementsAre("v2"));
  EXPECT_EQ(cached_copy(), copy);  // same place, no stray temporaries
  std::size_t files = 0;
  for (auto& e : fs::directory_iterator(copy.parent_path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

TEST_F(HooksCache, DeletedScriptIsAHookError) {
  const auto src = script("version.sh");
  yaml("one.yaml", "hooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          script: version.sh\n"
                   "          on_failure: block\n");
  auto set = load_ok();
  fs::remove(src);
  auto out = run_hooks(set, HookEvent::PreToolUse, input());
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].message, "could not start: script " + src.string() + " no longer exists");
  EXPECT_TRUE(out.blocked);
}

}  // namespace
}  // namespace hooks_test
