// Conformance: matchers (seed "Matcher" and the event table), including the tool aliases.
// Unit cases on HookMatcher, then real hooks run through run_hooks to show a hook runs once.
#include "../../fixtures/hooks/test_support.hpp"

namespace hooks_test {
namespace {

bool m(const std::string& matcher, const std::string& value) {
  std::string err;
  auto hm = HookMatcher::parse(matcher, &err);
  EXPECT_TRUE(err.empty()) << err;
  return hm.matches(value);
}

TEST(HookMatcher, EmptyStarMatchAll) {
  EXPECT_TRUE(m("", "bash"));
  EXPECT_TRUE(m("*", "anything"));
  EXPECT_EQ(HookMatcher::parse("*", nullptr).kind(), HookMatcher::Kind::All);
  EXPECT_EQ(HookMatcher::parse("", nullptr).kind(), HookMatcher::Kind::All);
}

TEST(HookMatcher, ExactNamesSplitOnBar) {
  EXPECT_EQ(HookMatcher::parse("bash|apply_patch", nullptr).kind(), HookMatcher::Kind::Exact);
  EXPECT_TRUE(m("bash|apply_patch", "bash"));
  EXPECT_TRUE(m("bash|apply_patch", "apply_patch"));
  EXPECT_FALSE(m("bash|apply_patch", "read_file"));
  EXPECT_FALSE(m("Bash", "BashOutput"));      // exact, not a prefix
  EXPECT_FALSE(m("mcp__memory", "mcp__memory__create"));
  EXPECT_FALSE(m("bash", "Bash"));           // case-sensitive
}

TEST(HookMatcher, HyphenIsPartOfExactNames) {
  // Pinned: '-' is in the exact character set, so this is not a regex.
  EXPECT_EQ(HookMatcher::parse("code-reviewer", nullptr).kind(), HookMatcher::Kind::Exact);
  EXPECT_TRUE(m("code-reviewer", "code-reviewer"));
  EXPECT_FALSE(m("code-reviewer", "senior-code-reviewer"));
}

TEST(HookMatcher, AnythingElseIsAnUnanchoredGoRegex) {
  EXPECT_EQ(HookMatcher::parse("^Bash", nullptr).kind(), HookMatcher::Kind::Regex);
  EXPECT_TRUE(m("^Bash", "BashOutput"));
  EXPECT_FALSE(m("^Bash$", "BashOutput"));
  EXPECT_TRUE(m("mcp__memory__.*", "mcp__memory__create"));
  EXPECT_FALSE(m("mcp__.*__write.*", "mcp__fs__read_file"));
  EXPECT_TRUE(m("Edit.*", "NotebookEdit"));  // unanchored
  EXPECT_TRUE(m("(?i)bash", "BASH"));        // RE2 inline flag
  EXPECT_TRUE(m("apply_.", "apply_patch"));
}

TEST(HookMatcher, RegexErrorsComeFromRe2) {
  std::string err;
  HookMatcher::parse("a(?=b)", &err);  // lookahead: not Go syntax
  EXPECT_EQ(err, "invalid perl operator: (?=");
  err.clear();
  auto hm = HookMatcher::parse("[", &err);
  EXPECT_EQ(err, "missing ]: [");
  EXPECT_FALSE(hm.matches("["));
}

TEST(HookMatcher, AliasTable) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(tool_name_aliases("bash"), (V{"bash", "Bash"}));
  EXPECT_EQ(tool_name_aliases("apply_patch"), (V{"apply_patch", "Write", "Edit"}));
  EXPECT_EQ(tool_name_aliases("read_file"), (V{"read_file", "Read"}));
  EXPECT_EQ(tool_name_aliases("spawn_agent"), (V{"spawn_agent", "Agent"}));
  EXPECT_EQ(tool_name_aliases("mcp__x__y"), (V{"mcp__x__y"}));
}

class HooksMatch : public HooksTest {
 protected:
  // Does a PreToolUse hook with this matcher run for this canonical tool? (real process)
  int runs_for(const std::string& matcher, const std::string& tool, HookEvent ev = HookEvent::PreToolUse) {
    yaml("m.yaml", "hooks:\n  " + std::string(to_string(ev)) + ":\n    - matcher: " + quote(matcher) +
                       "\n      hooks:\n        - type: command\n          command: 'true'\n");
    auto set = load_ok();
    auto in = input();
    in.tool_name = tool;
    return static_cast<int>(run_hooks(set, ev, in).runs.size());
  }
};

TEST_F(HooksMatch, AliasesMatchTheCanonicalTool) {
  EXPECT_EQ(runs_for("Bash", "bash"), 1);
  EXPECT_EQ(runs_for("bash", "bash"), 1);
  EXPECT_EQ(runs_for("Write", "apply_patch"), 1);
  EXPECT_EQ(runs_for("Edit", "apply_patch"), 1);
  EXPECT_EQ(runs_for("Read", "read_file"), 1);
  EXPECT_EQ(runs_for("Agent", "spawn_agent"), 1);
  EXPECT_EQ(runs_for("Grep", "read_file"), 0);
  EXPECT_EQ(runs_for("Write", "bash"), 0);
  EXPECT_EQ(runs_for("^Bash$", "bash"), 1) << "a regex also sees the aliases";
  EXPECT_EQ(runs_for("Edit|Write", "bash"), 0);
  EXPECT_EQ(runs_for("Bash", "bash", HookEvent::PostToolUse), 1);
}

TEST_F(HooksMatch, SeveralAliasesMatchingRunTheHookOnce) {
  EXPECT_EQ(runs_for("apply_patch|Write|Edit", "apply_patch"), 1);
  EXPECT_EQ(runs_for(".*", "apply_patch"), 1);
}

TEST_F(HooksMatch, StdinCarriesTheCanonicalName) {
  script("save_stdin.sh");
  yaml("m.yaml", "hooks:\n  PreToolUse:\n    - matcher: Write\n      hooks:\n        - type: command\n"
                 "          script: save_stdin.sh\n          args: [" + (root_ / "in.json").string() + "]\n");
  auto set = load_ok();
  auto in = input();
  in.tool_name = "apply_patch";
  run_hooks(set, HookEvent::PreToolUse, in);
  auto v = boost::json::parse(read_text(root_ / "in.json"));
  EXPECT_EQ(v.at("tool_name"), "apply_patch");
}

TEST_F(HooksMatch, SessionStartMatchesSource) {
  yaml("m.yaml", "hooks:\n  SessionStart:\n    - matcher: resume\n      hooks:\n        - type: command\n"
                 "          command: 'true'\n");
  auto set = load_ok();
  auto in = input();
  in.source = "startup";
  EXPECT_EQ(run_hooks(set, HookEvent::SessionStart, in).runs.size(), 0u);
  in.source = "resume";
  EXPECT_EQ(run_hooks(set, HookEvent::SessionStart, in).runs.size(), 1u);
}

TEST_F(HooksMatch, SubagentEventsMatchAgentType) {
  yaml("m.yaml", "hooks:\n  SubagentStart:\n    - matcher: 'review.*'\n      hooks:\n        - type: command\n"
                 "          command: 'true'\n  SubagentStop:\n    - matcher: code-reviewer\n      hooks:\n"
                 "        - type: command\n          command: 'true'\n");
  auto set = load_ok();
  auto in = input();
  in.agent_id = "a1";
  in.agent_type = "reviewer";
  EXPECT_EQ(run_hooks(set, HookEvent::SubagentStart, in).runs.size(), 1u);
  EXPECT_EQ(run_hooks(set, HookEvent::SubagentStop, in).runs.size(), 0u);
  in.agent_type = "code-reviewer";
  EXPECT_EQ(run_hooks(set, HookEvent::SubagentStop, in).runs.size(), 1u);
  in.agent_type = "general";
  EXPECT_EQ(run_hooks(set, HookEvent::SubagentStart, in).runs.size(), 0u);
}

TEST_F(HooksMatch, UserPromptSubmitAndStopAlwaysMatch) {
  yaml("m.yaml", "hooks:\n  UserPromptSubmit:\n    - matcher: nothing-matches-this\n      hooks:\n"
                 "        - type: command\n          command: 'true'\n  Stop:\n    - matcher: '['\n      hooks:\n"
                 "        - type: command\n          command: 'true'\n");
  Diagnostics d;
  auto set = load(d);
  EXPECT_FALSE(runtime::config::has_errors(d));
  EXPECT_EQ(run_hooks(set, HookEvent::UserPromptSubmit, input()).runs.size(), 1u);
  EXPECT_EQ(run_hooks(set, HookEvent::Stop, input()).runs.size(), 1u);
}

TEST_F(HooksMatch, OtherEventsHooksDoNotRun) {
  yaml("m.yaml", "hooks:\n  PostToolUse:\n    - hooks:\n        - type: command\n          command: 'true'\n");
  auto set = load_ok();
  EXPECT_EQ(run_hooks(set, HookEvent::PreToolUse, input()).runs.size(), 0u);
  EXPECT_EQ(run_hooks(set, HookEvent::PostToolUse, input()).runs.size(), 1u);
}

}  // namespace
}  // namespace hooks_test
