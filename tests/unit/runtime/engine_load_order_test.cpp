// Engine::load reads its files on several threads; what it returns must be what one thread
// reading them in order would: the same skills, hooks and diagnostics, in the same order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine_test_util.hpp"
#include "runtime/hooks/hooks.hpp"

using namespace runtime::engine;
using engine_test::join;
using engine_test::Tree;
using runtime::config::Diagnostics;
using ::testing::ElementsAre;

namespace {

// A tree with one problem in every place the load reads.
void write_broken_tree(const Tree& t) {
  t.write("config/config.yaml", "plugins:\n  disabled: [ghost]\n");
  t.write("config/skills/bad/SKILL.md", "no frontmatter\n");
  t.skill("config/skills/good", "good", "a private skill");
  t.write("config/mcp_servers/bad.yaml", "id: bad\ntype: nope\n");
  t.write("config/plugins/pa/.openvaala-plugin/plugin.yaml", "name: pa\nversion: [1]\n");
  t.write("config/plugins/pb/.openvaala-plugin/plugin.yaml", "name: wrong\n");
  for (std::string n : {"pd", "pc"})  // the hook sections of pc and pd: in plugin-name order
    t.write("config/plugins/" + n + "/.openvaala-plugin/plugin.yaml",
            "name: " + n + "\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: 'true'\n"
                           "          timeout: 0\n");
  for (int i = 0; i < 12; ++i) {
    std::string n = "p" + std::to_string(10 + i);
    t.write("config/plugins/" + n + "/.openvaala-plugin/plugin.yaml",
            "name: " + n + "\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: echo " + n + "\n");
    t.skill("config/plugins/" + n + "/skills/s", "s", "plugin skill");
  }
  for (std::string f : {"b", "a"})
    t.write("config/hooks/" + f + ".yaml", "hooks:\n  Stop:\n    - hooks:\n        - type: command\n"
                                           "          command: echo " + f + "\n        - type: nope\n");
  t.write("home/.agents/skills/bad/SKILL.md", "no frontmatter\n");
  t.write("home/.claude/skills/bad/SKILL.md", "no frontmatter\n");
  t.write("config/agents/x.yaml", "description: [\n");
  t.write("config/agents/y.yaml", "mcp_servers: [not-a-server]\n");
}

// Each diagnostic's file (relative to the tree) and line: the order is what is checked here.
std::vector<std::string> places(const Tree& t, const Diagnostics& d) {
  std::vector<std::string> out;
  for (const auto& x : d) out.push_back(fs::path(x.path).lexically_relative(t.root()).string() + ":" + std::to_string(x.line));
  return out;
}

std::vector<std::string> hook_labels(const runtime::hooks::HookSet& set) {
  std::vector<std::string> out;
  for (const auto& h : set.hooks) out.push_back(h.location() + " " + h.label());
  return out;
}

}  // namespace

TEST(EngineLoadOrder, DiagnosticsComeInTheSingleThreadOrder) {
  Tree t;
  write_broken_tree(t);
  Diagnostics d;
  auto e = t.load(d);
  // private skills, (built-in), config.yaml, MCP files, plugins by folder, plugins.disabled,
  // hooks/*.yaml by name, plugin hook sections by plugin name, ~/.agents, ~/.claude, agents.
  EXPECT_THAT(places(t, d), ElementsAre("config/skills/bad/SKILL.md:1", "config/mcp_servers/bad.yaml:2",
                                        "config/plugins/pa/.openvaala-plugin/plugin.yaml:2",
                                        "config/plugins/pb/.openvaala-plugin/plugin.yaml:1", "config/config.yaml:1",
                                        "config/hooks/a.yaml:6", "config/hooks/a.yaml:6", "config/hooks/b.yaml:6",
                                        "config/hooks/b.yaml:6",
                                        "config/plugins/pc/.openvaala-plugin/plugin.yaml:7",
                                        "config/plugins/pd/.openvaala-plugin/plugin.yaml:7",
                                        "home/.agents/skills/bad/SKILL.md:1", "home/.claude/skills/bad/SKILL.md:1",
                                        "config/agents/x.yaml:2", "config/agents/y.yaml:1"))
      << join(d);
  EXPECT_TRUE(e->failed());
}

TEST(EngineLoadOrder, HooksAreWhatTheHookLoaderReturns) {
  Tree t;
  write_broken_tree(t);
  Diagnostics d;
  auto e = t.load(d);
  Diagnostics hd;
  auto alone = runtime::hooks::load_hooks(t.config(), e->plugin_hook_sources(), hd);
  EXPECT_EQ(hook_labels(e->hooks()), hook_labels(alone));
  EXPECT_EQ(e->hooks().hooks.size(), 14u);  // one in a.yaml and b.yaml each, one in p10..p21 each
  // The hook loader's diagnostics appear in the engine's, in its order.
  std::vector<std::string> in_engine, expected = places(t, hd);
  for (const auto& p : places(t, d))
    if (std::find(expected.begin(), expected.end(), p) != expected.end()) in_engine.push_back(p);
  EXPECT_EQ(in_engine, expected);
}

TEST(EngineLoadOrder, RepeatedLoadsAgree) {
  Tree t;
  write_broken_tree(t);
  Diagnostics first;
  auto e0 = t.load(first);
  for (int i = 0; i < 20; ++i) {
    Diagnostics d;
    auto e = t.load(d);
    ASSERT_EQ(join(d), join(first));
    ASSERT_EQ(hook_labels(e->hooks()), hook_labels(e0->hooks()));
    ASSERT_EQ(e->user_level_skills().size(), e0->user_level_skills().size());
    for (std::size_t k = 0; k < e->user_level_skills().size(); ++k)
      ASSERT_EQ(e->user_level_skills()[k]->file, e0->user_level_skills()[k]->file);
    ASSERT_EQ(e->plugins().size(), e0->plugins().size());
    for (std::size_t k = 0; k < e->plugins().size(); ++k) ASSERT_EQ(e->plugins()[k].name, e0->plugins()[k].name);
  }
}

// The server's first load leaves the skills out (session/new waits only for it): it must agree
// with the whole load on everything else, and read no SKILL.md at all.
TEST(EngineLoadOrder, AWithoutSkillsLoadIsTheWholeLoadMinusTheSkills) {
  Tree t;
  write_broken_tree(t);
  Diagnostics whole_diags, core_diags;
  auto whole = t.load(whole_diags);
  auto options = t.options();
  options.skills = false;
  auto core = Engine::load(options, core_diags);
  EXPECT_TRUE(whole->skills_loaded());
  EXPECT_FALSE(core->skills_loaded()) << "an engine loaded without skills says so (sessions wait for the whole one)";
  EXPECT_TRUE(core->user_level_skills().empty()) << "no skill is read in the first step";
  for (const auto& d : core_diags) EXPECT_NE(fs::path(d.path).filename(), "SKILL.md") << "a SKILL.md was read: " << d.to_string();
  EXPECT_EQ(core->failed(), whole->failed()) << "whether the configuration loads does not depend on the skills";
  EXPECT_EQ(hook_labels(core->hooks()), hook_labels(whole->hooks()));
  ASSERT_EQ(core->plugins().size(), whole->plugins().size());
  for (std::size_t i = 0; i < core->plugins().size(); ++i) {
    EXPECT_EQ(core->plugins()[i].name, whole->plugins()[i].name);
    EXPECT_EQ(core->plugins()[i].valid, whole->plugins()[i].valid) << core->plugins()[i].name;
  }
  ASSERT_EQ(core->mcp_servers().size(), whole->mcp_servers().size());
  EXPECT_EQ(core->agents().size(), whole->agents().size());
  EXPECT_EQ(core->default_agent(), whole->default_agent());
  EXPECT_FALSE(whole->user_level_skills().empty());
}
