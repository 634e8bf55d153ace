// One name, one plugin (issue 40, nit): a folder whose manifest claims the name of another plugin
// (a copy "p12" that still says "p2", beside "p2") is refused with an error naming both folders;
// the folder named like the plugin keeps the name, whichever comes first.
#include <gtest/gtest.h>

#include "engine_test_util.hpp"

using namespace runtime::engine;
using engine_test::contains;
using engine_test::join;
using engine_test::Tree;
using runtime::config::Diagnostics;

namespace {

std::size_t plugins_named(const Engine& e, const std::string& name) {
  std::size_t n = 0;
  for (const auto& p : e.plugins()) n += p.name == name;
  return n;
}

TEST(EnginePluginNames, ACopyClaimingAnotherPluginsNameIsRefused) {
  Tree t;
  t.write("config/plugins/p2/.claude-plugin/plugin.json", R"({"name": "p2", "version": "1.0.0"})");
  t.skill("config/plugins/p2/skills/real", "real", "the real p2's skill");
  t.write("config/plugins/p12/.claude-plugin/plugin.json", R"({"name": "p2", "version": "6.6.6"})");
  t.skill("config/plugins/p12/skills/copy", "copy", "the copy's skill");
  Diagnostics d;
  auto e = t.load(d);
  const fs::path p2 = t.config() / "plugins" / "p2", p12 = t.config() / "plugins" / "p12";
  EXPECT_TRUE(contains(d, (p12 / ".claude-plugin/plugin.json").string() + ": plugin name 'p2' is taken by the plugin in " +
                              p2.string() + "; the plugin in " + p12.string() +
                              " is not loaded (give it another name, or remove or disable one)"))
      << join(d);
  EXPECT_TRUE(e->failed()) << "an error, as for two plugins declaring one MCP server id";
  EXPECT_EQ(plugins_named(*e, "p2"), 1u);
  ASSERT_TRUE(e->find_plugin("p2"));
  EXPECT_EQ(e->find_plugin("p2")->root, p2) << "the folder named p2 keeps the name, though p12 sorts first";
  EXPECT_EQ(e->find_plugin("p2")->version, "1.0.0");
}

TEST(EnginePluginNames, TwoCopiesNeitherNamedSoTheFirstKeepsIt) {
  Tree t;
  t.write("config/plugins/tools-a/.claude-plugin/plugin.json", R"({"name": "tools"})");
  t.write("config/plugins/tools-b/.claude-plugin/plugin.json", R"({"name": "tools"})");
  Diagnostics d;
  auto e = t.load(d);
  const fs::path a = t.config() / "plugins" / "tools-a", b = t.config() / "plugins" / "tools-b";
  EXPECT_TRUE(contains(d, (b / ".claude-plugin/plugin.json").string() + ": plugin name 'tools' is taken by the plugin in " +
                              a.string() + "; the plugin in " + b.string() +
                              " is not loaded (give it another name, or remove or disable one)"))
      << join(d);
  EXPECT_EQ(plugins_named(*e, "tools"), 1u);
}

TEST(EnginePluginNames, DistinctNamesLoadCleanly) {
  Tree t;
  t.write("config/plugins/p2/.claude-plugin/plugin.json", R"({"name": "p2"})");
  t.write("config/plugins/p12/.claude-plugin/plugin.json", R"({"name": "p12"})");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_FALSE(e->failed()) << join(d);
  EXPECT_EQ(plugins_named(*e, "p2") + plugins_named(*e, "p12"), 2u);
}

}  // namespace
