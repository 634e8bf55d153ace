// Conformance: loading and validating hooks (seed "Hook" → "Hook 字段", files, plugins).
// Every validation error is pinned with its exact text, file and line.
#include "../../fixtures/hooks/test_support.hpp"

namespace hooks_test {
namespace {

using ::testing::ElementsAre;

class HooksLoad : public HooksTest {
 protected:
  // Loads hooks/<name> with `text` and returns every diagnostic as a string.
  std::vector<std::string> diags_for(const std::string& text, const std::string& name = "h.yaml") {
    yaml(name, text);
    Diagnostics d;
    load(d);
    std::vector<std::string> out;
    for (const auto& x : d) out.push_back(x.to_string());
    return out;
  }
  std::string at(int line, const std::string& name = "h.yaml") const {
    return (hooks_dir() / name).string() + ":" + std::to_string(line) + ": ";
  }
};

TEST_F(HooksLoad, SeedExampleLoadsWithDefaults) {
  script("exit_with.sh");
  fs::rename(hooks_dir() / "exit_with.sh", hooks_dir() / "guard.sh");
  script("true.sh");
  fs::rename(hooks_dir() / "true.sh", hooks_dir() / "gofmt.sh");
  yaml("go.yaml", R"(# hooks/go.yaml
hooks:
  PreToolUse:
    - matcher: bash
      hooks:
        - type: command
          script: guard.sh          # relative to this yaml file
          args: [--strict]
          timeout: 10
          on_failure: block
  PostToolUse:
    - matcher: apply_patch
      hooks:
        - type: command
          script: gofmt.sh
  Stop:
    - hooks:
        - type: command
          command: ~/bin/check-tests.sh
          timeout: 600
)");
  auto set = load_ok();
  ASSERT_EQ(set.hooks.size(), 3u);
  const Hook& pre = set.hooks[0];
  EXPECT_EQ(pre.event, HookEvent::PreToolUse);
  EXPECT_EQ(pre.matcher.kind(), HookMatcher::Kind::Exact);
  EXPECT_EQ(*pre.script, hooks_dir() / "guard.sh");
  EXPECT_EQ(pre.args, std::vector<std::string>{"--strict"});
  EXPECT_EQ(pre.timeout, std::chrono::seconds(10));
  EXPECT_EQ(pre.on_failure, OnFailure::Block);
  EXPECT_EQ(pre.line, 6);
  EXPECT_EQ(pre.location(), (hooks_dir() / "go.yaml").string() + ":6");
  const Hook& post = set.hooks[1];
  EXPECT_EQ(post.timeout, std::chrono::seconds(60));  // default
  EXPECT_EQ(post.on_failure, OnFailure::Default);     // not written
  const Hook& stop = set.hooks[2];
  EXPECT_EQ(*stop.command, "~/bin/check-tests.sh");  // run as written, on the target
  EXPECT_EQ(stop.matcher.kind(), HookMatcher::Kind::All);
  EXPECT_EQ(stop.timeout, std::chrono::seconds(600));
}

TEST_F(HooksLoad, OnlyYamlFilesAreConfig) {
  write_text(hooks_dir() / "guard.sh", "#!/bin/sh\nnot: [yaml\n");
  write_text(hooks_dir() / "README.md", "hooks: [broken\n");
  write_text(hooks_dir() / "x.yml", "hooks: [broken\n");
  write_text(hooks_dir() / ".hidden.yaml", "hooks: [broken\n");
  fs::create_directories(hooks_dir() / "sub.yaml");  // a directory, not a file
  yaml("a.yaml", "hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: 'true'\n");
  yaml("empty.yaml", "");
  auto set = load_ok();
  EXPECT_EQ(set.hooks.size(), 1u);
}

TEST_F(HooksLoad, NoHooksDirectoryIsFine) {
  fs::remove_all(hooks_dir());
  auto set = load_ok();
  EXPECT_TRUE(set.empty());
}

TEST_F(HooksLoad, InvalidYamlNamesFileAndLine) {
  auto d = diags_for("hooks:\n  Stop:\n    - hooks: [\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].rfind(at(4) + "invalid YAML: ", 0), 0u) << d[0];
}

TEST_F(HooksLoad, UnknownTopLevelKey) {
  EXPECT_THAT(diags_for("hooks: {}\nextra: 1\n"),
              ElementsAre(at(2) + "unknown key 'extra' in a hooks file (allowed: hooks)"));
}

TEST_F(HooksLoad, FileMustBeAMapping) {
  EXPECT_THAT(diags_for("- a\n- b\n"), ElementsAre(at(1) + "a hooks file must be a mapping with a 'hooks' key"));
}

TEST_F(HooksLoad, HooksMustBeAMapping) {
  EXPECT_THAT(diags_for("hooks:\n  - Stop\n"),
              ElementsAre(at(2) + "'hooks' must be a mapping from event names (SessionStart, UserPromptSubmit, "
                                  "PreToolUse, PostToolUse, Stop, SubagentStart, SubagentStop) to lists of matcher groups"));
}

TEST_F(HooksLoad, UnknownEvent) {
  EXPECT_THAT(diags_for("hooks:\n  PreCompact:\n    - hooks: []\n  Stop: []\n"),
              ElementsAre(at(2) + "unknown hook event 'PreCompact' (allowed: SessionStart, UserPromptSubmit, "
                                  "PreToolUse, PostToolUse, Stop, SubagentStart, SubagentStop)"));
}

TEST_F(HooksLoad, EventMustBeAList) {
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    hooks: []\n"),
              ElementsAre(at(3) + "Stop: must be a list of matcher groups, each with 'hooks' and an optional 'matcher'"));
}

TEST_F(HooksLoad, MatcherGroupShape) {
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - just text\n    - matcher: x\n    - hooks: nope\n    - hooks: []\n      when: always\n"),
              ElementsAre(at(3) + "Stop: each matcher group must be a mapping with 'hooks' and an optional 'matcher'",
                          at(4) + "warning: Stop: 'matcher' is ignored on Stop (its hooks always run)",
                          at(4) + "Stop matcher group: 'hooks' is required (a list of hooks)",
                          at(5) + "Stop matcher group: 'hooks' must be a list of hooks",
                          at(7) + "unknown key 'when' in Stop matcher group (allowed: matcher, hooks)"));
}

TEST_F(HooksLoad, HookMustBeAMapping) {
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - echo hi\n"),
              ElementsAre(at(4) + "Stop hook: each hook must be a mapping with 'type' and 'command' or 'script'"));
}

TEST_F(HooksLoad, TypeIsRequired) {
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - command: 'true'\n"),
              ElementsAre(at(4) + "Stop hook: 'type' is required (the only type is 'command')"));
}

TEST_F(HooksLoad, TypeMustBeCommand) {
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: http\n          command: 'true'\n"),
              ElementsAre(at(4) + "Stop hook: type must be 'command', not 'http'"));
}

TEST_F(HooksLoad, CommandOrScriptRequired) {
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: command\n          timeout: 5\n"),
              ElementsAre(at(4) + "Stop hook: one of 'command' or 'script' is required"));
}

TEST_F(HooksLoad, CommandAndScriptTogether) {
  script("true.sh");
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: 'true'\n"
                        "          script: true.sh\n"),
              ElementsAre(at(6) + "Stop hook: write either 'command' or 'script', not both"));
}

TEST_F(HooksLoad, EmptyCommand) {
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: '  '\n"),
              ElementsAre(at(5) + "Stop hook: 'command' must not be empty"));
}

TEST_F(HooksLoad, ArgsOnlyWithScript) {
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: 'true'\n"
                        "          args: [a]\n"),
              ElementsAre(at(6) + "Stop hook: 'args' can only be used with 'script'"));
}

TEST_F(HooksLoad, ArgsMustBeStrings) {
  script("true.sh");
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: true.sh\n"
                        "          args: --strict\n"),
              ElementsAre(at(6) + "Stop hook: 'args' must be a list of strings"));
}

TEST_F(HooksLoad, TimeoutMustBePositive) {
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n"
                        "        - type: command\n          command: 'true'\n          timeout: 0\n"
                        "        - type: command\n          command: 'true'\n          timeout: -5\n"
                        "        - type: command\n          command: 'true'\n          timeout: -0.5\n"
                        "        - type: command\n          command: 'true'\n          timeout: soon\n"
                        "        - type: command\n          command: 'true'\n          timeout: .nan\n"),
              ElementsAre(at(6) + "Stop hook: 'timeout' must be a positive number of seconds, not '0'",
                          at(9) + "Stop hook: 'timeout' must be a positive number of seconds, not '-5'",
                          at(12) + "Stop hook: 'timeout' must be a positive number of seconds, not '-0.5'",
                          at(15) + "Stop hook: 'timeout' must be a positive number of seconds, not 'soon'",
                          at(18) + "Stop hook: 'timeout' must be a positive number of seconds, not '.nan'"));
}

TEST_F(HooksLoad, TimeoutAcceptsFractionalSeconds) {
  // The seed says only "positive": 1.5 is a timeout of one and a half seconds, not an error.
  yaml("t.yaml",
       "hooks:\n  Stop:\n    - hooks:\n"
       "        - type: command\n          command: 'true'\n          timeout: 1.5\n"
       "        - type: command\n          command: 'true'\n          timeout: 0.25\n"
       "        - type: command\n          command: 'true'\n          timeout: 2\n");
  auto set = load_ok();
  ASSERT_EQ(set.hooks.size(), 3u) << "timeout: 1.5 and 0.25 are accepted";
  EXPECT_EQ(set.hooks[0].timeout, std::chrono::milliseconds(1500)) << "timeout: 1.5 is 1.5 s";
  EXPECT_EQ(set.hooks[1].timeout, std::chrono::milliseconds(250)) << "timeout: 0.25 is 250 ms";
  EXPECT_EQ(set.hooks[2].timeout, std::chrono::seconds(2));
}

TEST_F(HooksLoad, OnFailureOnlyOnPreToolUseAndUserPromptSubmit) {
  const std::string hook = "      hooks:\n        - type: command\n          command: 'true'\n          on_failure: allow\n";
  std::string text = "hooks:\n";
  for (auto ev : {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStart", "SubagentStop"})
    text += std::string("  ") + ev + ":\n    - \n" + hook;
  // Each event block is 6 lines; on_failure is its 6th line.
  EXPECT_THAT(diags_for(text),
              ElementsAre(at(7) + "SessionStart hook: 'on_failure' can only be used on PreToolUse and UserPromptSubmit hooks",
                          at(25) + "PostToolUse hook: 'on_failure' can only be used on PreToolUse and UserPromptSubmit hooks",
                          at(31) + "Stop hook: 'on_failure' can only be used on PreToolUse and UserPromptSubmit hooks",
                          at(37) + "SubagentStart hook: 'on_failure' can only be used on PreToolUse and UserPromptSubmit hooks",
                          at(43) + "SubagentStop hook: 'on_failure' can only be used on PreToolUse and UserPromptSubmit hooks"));
}

TEST_F(HooksLoad, OnFailureValues) {
  EXPECT_THAT(diags_for("hooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          command: 'true'\n"
                        "          on_failure: deny\n"),
              ElementsAre(at(6) + "PreToolUse hook: 'on_failure' must be 'allow' or 'block', not 'deny'"));
}

TEST_F(HooksLoad, UnknownHookKey) {
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: 'true'\n"
                        "          async: true\n"),
              ElementsAre(at(6) + "unknown key 'async' in Stop hook (allowed: type, command, script, args, timeout, on_failure)"));
}

TEST_F(HooksLoad, ScriptMustExist) {
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: missing.sh\n"),
              ElementsAre(at(5) + "Stop hook: script 'missing.sh' does not exist (" + (hooks_dir() / "missing.sh").string() + ")"));
}

TEST_F(HooksLoad, ScriptMustBeAFile) {
  fs::create_directories(hooks_dir() / "dir.sh");
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: dir.sh\n"),
              ElementsAre(at(5) + "Stop hook: script 'dir.sh' is not a file (" + (hooks_dir() / "dir.sh").string() + ")"));
}

TEST_F(HooksLoad, ScriptNeedsShebang) {
  script("no_shebang.sh", {}, fs::perms(0755));
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: no_shebang.sh\n"),
              ElementsAre(at(5) + "Stop hook: script 'no_shebang.sh' does not start with a shebang line (#!)"));
}

TEST_F(HooksLoad, ScriptMustBeExecutable) {
  script("true.sh", {}, fs::perms(0644));
  EXPECT_THAT(diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: true.sh\n"),
              ElementsAre(at(5) + "Stop hook: script 'true.sh' is not executable (chmod +x " +
                          (hooks_dir() / "true.sh").string() + ")"));
}

TEST_F(HooksLoad, ScriptWithoutShebangNorExecBitGetsBothErrors) {
  script("no_shebang.sh", {}, fs::perms(0644));
  auto d = diags_for("hooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: no_shebang.sh\n");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], at(5) + "Stop hook: script 'no_shebang.sh' does not start with a shebang line (#!)");
  EXPECT_EQ(d[1].rfind(at(5) + "Stop hook: script 'no_shebang.sh' is not executable", 0), 0u);
}

TEST_F(HooksLoad, ScriptPathsRelativeAbsoluteAndHome) {
  script("true.sh", root_ / "elsewhere");
  script("version.sh", root_ / "home" / "bin");
  script("print_args.sh", hooks_dir() / "scripts");
  const char* old_home = std::getenv("HOME");
  std::string saved = old_home ? old_home : "";
  ::setenv("HOME", (root_ / "home").c_str(), 1);
  struct Restore {
    std::string v;
    ~Restore() { ::setenv("HOME", v.c_str(), 1); }
  } restore{saved};
  yaml("p.yaml", "hooks:\n  Stop:\n    - hooks:\n"
                 "        - type: command\n          script: scripts/print_args.sh\n"
                 "        - type: command\n          script: " + (root_ / "elsewhere" / "true.sh").string() + "\n"
                 "        - type: command\n          script: ~/bin/version.sh\n");
  auto set = load_ok();
  ASSERT_EQ(set.hooks.size(), 3u);
  EXPECT_EQ(*set.hooks[0].script, hooks_dir() / "scripts" / "print_args.sh");
  EXPECT_EQ(*set.hooks[1].script, root_ / "elsewhere" / "true.sh");
  EXPECT_EQ(*set.hooks[2].script, root_ / "home" / "bin" / "version.sh");
}

TEST_F(HooksLoad, InvalidRegexMatcherIsAnError) {
  EXPECT_THAT(diags_for("hooks:\n  PreToolUse:\n    - matcher: 'a(?=b)'\n      hooks:\n"
                        "        - type: command\n          command: 'true'\n"
                        "    - matcher: '['\n      hooks:\n        - type: command\n          command: 'true'\n"),
              ElementsAre(at(3) + "PreToolUse: matcher 'a(?=b)' is not a valid regular expression: invalid perl operator: (?=",
                          at(7) + "PreToolUse: matcher '[' is not a valid regular expression: missing ]: ["));
  Diagnostics d;
  EXPECT_TRUE(load(d).empty());  // the group with the bad matcher is left out
}

TEST_F(HooksLoad, MatcherOnEventsWithoutMatcherIsIgnoredWithAWarning) {
  auto d = diags_for("hooks:\n  UserPromptSubmit:\n    - matcher: '['\n      hooks:\n"
                     "        - type: command\n          command: 'true'\n"
                     "  Stop:\n    - matcher: '*'\n      hooks:\n        - type: command\n          command: 'true'\n");
  EXPECT_THAT(d, ElementsAre(at(3) + "warning: UserPromptSubmit: 'matcher' is ignored on UserPromptSubmit (its hooks always run)"));
  Diagnostics diags;
  auto set = load(diags);
  EXPECT_FALSE(runtime::config::has_errors(diags));
  EXPECT_EQ(set.hooks.size(), 2u);  // still loaded: they always run
}

TEST_F(HooksLoad, InvalidHookIsLeftOutValidOnesKept) {
  yaml("h.yaml", "hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: 'true'\n"
                 "        - type: command\n          timeout: 0\n          command: 'true'\n");
  Diagnostics d;
  auto set = load(d);
  EXPECT_EQ(d.size(), 1u);
  EXPECT_EQ(set.hooks.size(), 1u);
}

TEST_F(HooksLoad, FilesLoadInNameOrderThenPluginsByName) {
  yaml("b.yaml", "hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: echo b\n");
  yaml("a.yaml", "hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: echo a1\n"
                 "        - type: command\n          command: echo a2\n");
  auto plugin = [&](const std::string& name) {
    PluginHookSource p;
    p.plugin_name = name;
    p.plugin_root = root_ / "plugins" / name;
    p.manifest_file = p.plugin_root / ".openvaala-plugin" / "plugin.yaml";
    p.hooks = YAML::Load("Stop:\n  - hooks:\n      - type: command\n        command: echo " + name + "\n");
    return p;
  };
  auto set = load_ok({plugin("zeta"), plugin("alpha")});
  std::vector<std::string> order;
  for (const auto& h : set.hooks) order.push_back(*h.command);
  EXPECT_THAT(order, ElementsAre("echo a1", "echo a2", "echo b", "echo alpha", "echo zeta"));
  EXPECT_EQ(set.hooks[3].plugin_name, "alpha");
  EXPECT_EQ(set.hooks[3].plugin_root, root_ / "plugins" / "alpha");
}

class HooksPluginLoad : public HooksLoad {
 protected:
  PluginHookSource plugin(const std::string& manifest_text) {
    PluginHookSource p;
    p.plugin_name = "review";
    p.plugin_root = root_ / "plugins" / "review";
    p.manifest_file = p.plugin_root / ".openvaala-plugin" / "plugin.yaml";
    write_text(p.manifest_file, manifest_text);
    YAML::Node m = YAML::LoadFile(p.manifest_file.string());
    p.hooks = m["hooks"];
    return p;
  }
  std::vector<std::string> plugin_diags(const std::string& manifest_text) {
    Diagnostics d;
    load(d, {plugin(manifest_text)});
    std::vector<std::string> out;
    for (const auto& x : d) out.push_back(x.to_string());
    return out;
  }
  std::string mat(int line) const {
    return (root_ / "plugins" / "review" / ".openvaala-plugin" / "plugin.yaml").string() + ":" + std::to_string(line) + ": ";
  }
};

TEST_F(HooksPluginLoad, SeedManifestExampleLoads) {
  script("plugin_root.sh", root_ / "plugins" / "review" / "hooks");
  fs::rename(root_ / "plugins/review/hooks/plugin_root.sh", root_ / "plugins/review/hooks/inject");
  Diagnostics d;
  auto set = load(d, {plugin("name: review\nversion: 1.2.0\nhooks:\n  SessionStart:\n    - hooks:\n"
                             "        - type: command\n          script: ./hooks/inject\n          args: [SessionStart]\n")});
  EXPECT_TRUE(d.empty()) << strings(d).front();
  ASSERT_EQ(set.hooks.size(), 1u);
  EXPECT_EQ(*set.hooks[0].script, root_ / "plugins" / "review" / "hooks" / "inject");
  EXPECT_EQ(set.hooks[0].line, 6);
  EXPECT_EQ(set.hooks[0].source_file, root_ / "plugins" / "review" / ".openvaala-plugin" / "plugin.yaml");
}

TEST_F(HooksPluginLoad, PluginScriptMustBeRelative) {
  script("true.sh", root_ / "elsewhere");
  EXPECT_THAT(plugin_diags("name: review\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n"
                           "          script: " + (root_ / "elsewhere" / "true.sh").string() + "\n"
                           "        - type: command\n          script: ~/x.sh\n"),
              ElementsAre(mat(6) + "Stop hook: plugin hook script '" + (root_ / "elsewhere" / "true.sh").string() +
                              "' must be a relative path inside the plugin directory",
                          mat(8) + "Stop hook: plugin hook script '~/x.sh' must be a relative path inside the plugin directory"));
}

TEST_F(HooksPluginLoad, PluginScriptMustStayInsideThePlugin) {
  script("true.sh", root_ / "plugins");
  fs::create_directories(root_ / "plugins" / "review" / "hooks");
  fs::create_symlink(root_ / "plugins" / "true.sh", root_ / "plugins" / "review" / "hooks" / "link.sh");
  EXPECT_THAT(plugin_diags("name: review\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n"
                           "          script: ../true.sh\n"
                           "        - type: command\n          script: hooks/link.sh\n"),
              ElementsAre(mat(6) + "Stop hook: plugin hook script '../true.sh' is outside the plugin directory",
                          mat(8) + "Stop hook: plugin hook script 'hooks/link.sh' is outside the plugin directory"));
}

TEST_F(HooksPluginLoad, ClonedNodeStillGetsManifestLines) {
  // The plugin loader hands over YAML::Clone(hooks), which loses line numbers.
  auto p = plugin("name: review\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n"
                  "          command: 'true'\n          timeout: 0\n");
  p.hooks = YAML::Clone(p.hooks);
  Diagnostics d;
  load(d, {p});
  EXPECT_THAT(strings(d), ElementsAre(mat(7) + "Stop hook: 'timeout' must be a positive number of seconds, not '0'"));
}

TEST_F(HooksPluginLoad, PluginHooksAreValidatedLikeFiles) {
  EXPECT_THAT(plugin_diags("name: review\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n"
                           "          command: 'true'\n          on_failure: block\n"),
              ElementsAre(mat(7) + "Stop hook: 'on_failure' can only be used on PreToolUse and UserPromptSubmit hooks"));
}

}  // namespace
}  // namespace hooks_test
