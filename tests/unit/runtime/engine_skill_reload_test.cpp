// A changed SKILL.md read again alone (Engine::with_skills_read_again): the same skills, in the
// same order and with the same problems, as a whole load of the files as they are now; every other
// skill shared with the engine before; null where only a whole load can tell.
#include <gtest/gtest.h>

#include "engine_test_util.hpp"

using namespace runtime::engine;
using engine_test::join;
using engine_test::Tree;
using runtime::config::Diagnostic;
using runtime::config::Diagnostics;

namespace {

// What a skill list says, skill by skill: the order, and each skill's fields.
std::vector<std::string> described(const std::vector<SkillPtr>& v) {
  std::vector<std::string> out;
  for (const auto& s : v)
    out.push_back(std::string(source_id(s->source)) + " " + s->name + ": " + s->description + " [" + s->argument_hint +
                  "] " + s->file.string());
  return out;
}

std::vector<std::string> errors_of(const Engine& e) {
  std::vector<std::string> out;
  for (const auto& d : e.diagnostics())
    if (d.path.find("SKILL.md") != std::string::npos) out.push_back(d.to_string());
  std::sort(out.begin(), out.end());
  return out;
}

// A tree with skills in the three watched places, a nested one, a plugin and a skipped one.
struct Fixture {
  Tree t;
  Fixture() {
    t.skill("config/skills/alpha", "alpha", "first alpha");
    t.skill("config/skills/group/beta", "beta", "first beta");
    t.skill("config/skills/group/gamma", "gamma", "first gamma");
    t.write("config/skills/broken/SKILL.md", "no frontmatter\n");
    t.write("config/plugins/pl/.openvaala-plugin/plugin.yaml", "name: pl\n");
    t.skill("config/plugins/pl/skills/plugged", "plugged", "from a plugin");
    t.skill("home/.agents/skills/delta", "delta", "first delta");
    t.skill("home/.claude/skills/epsilon", "epsilon", "first epsilon");
  }
  std::shared_ptr<const Engine> load() const {
    Diagnostics d;
    return t.load(d);
  }
  // Reads `rels` (folders under the tree) again on top of `e`.
  std::shared_ptr<const Engine> read_again(const Engine& e, const std::vector<std::string>& rels,
                                           std::vector<Engine::SkillSwap>* swaps_out = nullptr) const {
    std::vector<fs::path> dirs;
    for (const auto& r : rels) dirs.push_back(t.p(r));
    std::vector<Engine::SkillSwap> swaps;
    Diagnostics d;
    auto fresh = e.with_skills_read_again(dirs, swaps, d);
    if (swaps_out) *swaps_out = swaps;
    return fresh;
  }
  // The promise: the engine read again is the one a whole load gives now.
  void expect_as_whole_load(const Engine& fresh) const {
    auto whole = load();
    EXPECT_EQ(described(fresh.user_level_skills()), described(whole->user_level_skills()))
        << "a SKILL.md read again must give the skills a whole load gives";
    EXPECT_EQ(errors_of(fresh), errors_of(*whole)) << "a SKILL.md read again must carry the problems a whole load finds";
  }
};

}  // namespace

TEST(EngineSkillReload, AnEditedSkillIsReadAgainAndEveryOtherSkillIsShared) {
  Fixture f;
  auto before = f.load();
  f.t.write("config/skills/group/beta/SKILL.md", "---\nname: beta\ndescription: second beta\nargument-hint: <what>\n---\n");
  f.t.skill("home/.claude/skills/epsilon", "epsilon", "second epsilon");
  std::vector<Engine::SkillSwap> swaps;
  auto fresh = f.read_again(*before, {"config/skills/group/beta", "home/.claude/skills/epsilon"}, &swaps);
  ASSERT_TRUE(fresh) << "an edit in place must not need a whole load";
  f.expect_as_whole_load(*fresh);
  ASSERT_EQ(swaps.size(), 2u);
  EXPECT_EQ(swaps[0].before->description, "first beta");
  EXPECT_EQ(swaps[0].after->description, "second beta");
  // Not read again: the very same objects (a copy of 20,000 skills would cost what a load does).
  for (std::size_t i = 0; i < before->user_level_skills().size(); ++i) {
    const auto& s = before->user_level_skills()[i];
    if (s->name == "beta" || s->name == "epsilon") {
      EXPECT_NE(s, fresh->user_level_skills()[i]) << s->name << " must be read again";
      continue;
    }
    EXPECT_EQ(s, fresh->user_level_skills()[i]) << s->name << " was not changed and must be shared, not copied";
  }
  // The engine it was made from is untouched (sessions may still use it).
  EXPECT_EQ(before->user_level_skills()[1]->description, "first beta");
  EXPECT_EQ(fresh->skill_places()[0].folders, before->skill_places()[0].folders) << "the folders are shared";
}

TEST(EngineSkillReload, ASkillThatStopsLoadingGoesWithItsProblemAndComesBackInItsPlace) {
  Fixture f;
  auto before = f.load();
  f.t.write("config/skills/group/beta/SKILL.md", "---\nname: Not Kebab\ndescription: x\n---\n");
  std::vector<Engine::SkillSwap> swaps;
  auto broken = f.read_again(*before, {"config/skills/group/beta"}, &swaps);
  ASSERT_TRUE(broken);
  f.expect_as_whole_load(*broken);
  ASSERT_EQ(swaps.size(), 1u);
  EXPECT_FALSE(swaps[0].after) << "a skill that no longer loads is swapped for nothing";
  // The private skill's problem is an error, at its file (config check and the log show it).
  bool reported = false;
  for (const auto& d : broken->diagnostics())
    reported = reported || (d.severity == Diagnostic::Severity::Error && d.path == f.t.p("config/skills/group/beta/SKILL.md").string());
  EXPECT_TRUE(reported) << join(broken->diagnostics());

  f.t.skill("config/skills/group/beta", "beta", "fixed beta");
  f.t.skill("config/skills/broken", "broken", "fixed too");
  auto fixed = f.read_again(*broken, {"config/skills/group/beta", "config/skills/broken"});
  ASSERT_TRUE(fixed);
  f.expect_as_whole_load(*fixed);  // both back, each where the search finds it
}

TEST(EngineSkillReload, ChangesThatMoveTheSearchNeedAWholeLoad) {
  Fixture f;
  auto e = f.load();
  // A folder searched for skills, not one holding SKILL.md: a SKILL.md written there hides the
  // skills below it, which only a whole load drops.
  EXPECT_FALSE(f.read_again(*e, {"config/skills/group"}));
  f.t.skill("config/skills/group", "group", "now a skill itself");
  EXPECT_FALSE(f.read_again(*e, {"config/skills/group"}))
      << "a SKILL.md new in a searched folder must not be read in place: beta and gamma below it go";
  fs::remove(f.t.p("config/skills/group/SKILL.md"));
  // A folder the search never entered.
  EXPECT_FALSE(f.read_again(*e, {"config/skills/new-one"}));
  EXPECT_FALSE(f.read_again(*e, {"config/plugins/pl/skills/plugged"})) << "plugins are not watched places";
  // SKILL.md gone: the search goes on below that folder.
  fs::remove(f.t.p("config/skills/alpha/SKILL.md"));
  EXPECT_FALSE(f.read_again(*e, {"config/skills/alpha"}));
  // An engine without its skills has nothing to read again.
  auto options = f.t.options();
  options.skills = false;
  Diagnostics d;
  std::vector<Engine::SkillSwap> swaps;
  EXPECT_FALSE(Engine::load(options, d)->with_skills_read_again({f.t.p("config/skills/group/beta")}, swaps, d));
}

TEST(EngineSkillReload, AViewSwapsASkillOnlyWhenItKeepsItsName) {
  Fixture f;
  f.t.skill("project/.agents/skills/gamma", "gamma", "the project's gamma");  // shadows the private one
  auto before = f.load();
  auto view = before->session_view(f.t.project());
  f.t.skill("config/skills/group/gamma", "gamma", "second gamma");
  f.t.skill("config/skills/alpha", "alpha", "second alpha");
  std::vector<Engine::SkillSwap> swaps;
  auto fresh = f.read_again(*before, {"config/skills/alpha", "config/skills/group/gamma"}, &swaps);
  ASSERT_TRUE(fresh);
  for (const auto& s : swaps) EXPECT_TRUE(view.swap_skill(s.before, s.after));
  auto rebuilt = fresh->session_view(f.t.project());
  EXPECT_EQ(described(view.skills), described(rebuilt.skills)) << "a swapped view must be the view built again";
  EXPECT_EQ(described(view.shadowed), described(rebuilt.shadowed));
  EXPECT_EQ(view.find_skill("alpha")->description, "second alpha");

  // A new name may change what it shadows: the view must be built again.
  f.t.skill("config/skills/alpha", "renamed", "x");
  auto renamed = f.read_again(*fresh, {"config/skills/alpha"}, &swaps);
  ASSERT_TRUE(renamed);
  EXPECT_FALSE(view.swap_skill(swaps.back().before, swaps.back().after));
  EXPECT_EQ(view.find_skill("alpha")->description, "second alpha") << "a refused swap changes nothing";
}
