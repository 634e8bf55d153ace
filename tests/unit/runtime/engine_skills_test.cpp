// Skills: SKILL.md rules, the seven places, recursion, symlinks, the 1 MB limit, slash commands.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "engine_test_util.hpp"
#include "runtime/engine/loaders.hpp"

using namespace runtime::engine;
using engine_test::contains;
using engine_test::join;
using engine_test::Tree;
using runtime::config::Diagnostic;
using runtime::config::Diagnostics;

namespace {

std::vector<std::string> names(const std::vector<SkillPtr>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) out.push_back(s->name);
  return out;
}

const Skill* by_name(const std::vector<SkillPtr>& v, const std::string& n) {
  for (const auto& s : v)
    if (s->name == n) return s.get();
  return nullptr;
}

}  // namespace

TEST(EngineSkills, NameDefaultsToFolderAndOtherFieldsAreIgnored) {
  Tree t;
  t.write("config/skills/release-notes/SKILL.md",
          "---\ndescription: Use when drafting release notes.\nargument-hint: [tag]\nwhen_to_use: later\n---\n# x\n");
  Diagnostics d;
  auto e = t.load(d);
  auto v = e->session_view(t.project());
  const Skill* s = by_name(v.skills, "release-notes");
  ASSERT_NE(s, nullptr) << join(d);
  EXPECT_EQ(s->description, "Use when drafting release notes.");
  EXPECT_EQ(s->source, SkillSource::Private);
  EXPECT_EQ(s->file, t.config() / "skills/release-notes/SKILL.md");
  EXPECT_FALSE(runtime::config::has_errors(d)) << join(d);
}

TEST(EngineSkills, MalformedPrivateSkillsAreErrorsWithFileAndLine) {
  Tree t;
  t.write("config/skills/bad-name/SKILL.md", "---\nname: Release_Notes\ndescription: x\n---\n");
  t.write("config/skills/no-desc/SKILL.md", "---\nname: no-desc\n---\nbody\n");
  t.write("config/skills/no-front/SKILL.md", "# just markdown\n");
  t.write("config/skills/unclosed/SKILL.md", "---\nname: unclosed\ndescription: x\n");
  t.write("config/skills/colon/SKILL.md", "---\nname: colon\ndescription: Use when: x\n---\n");
  t.write("config/skills/empty-desc/SKILL.md", "---\nname: empty-desc\ndescription:\n---\n");
  Diagnostics d;
  auto e = t.load(d);
  const std::string base = (t.config() / "skills").string();
  EXPECT_TRUE(contains(d, base + "/bad-name/SKILL.md:2: name 'Release_Notes' is invalid: use lowercase letters, "
                                 "digits and single hyphens (like release-notes) (skill skipped)"))
      << join(d);
  EXPECT_TRUE(contains(d, base + "/no-desc/SKILL.md:1: 'description' is required: say when the agent should use "
                                 "this skill (skill skipped)"))
      << join(d);
  EXPECT_TRUE(contains(d, base + "/no-front/SKILL.md:1: SKILL.md must start with YAML frontmatter: a '---' line, "
                                 "then 'name:' and 'description:', then '---' (skill skipped)"))
      << join(d);
  EXPECT_TRUE(contains(d, base + "/unclosed/SKILL.md:1: the YAML frontmatter is not closed by a '---' line (skill "
                                 "skipped)"))
      << join(d);
  EXPECT_TRUE(contains(d, base + "/empty-desc/SKILL.md:3: 'description' is required: say when the agent should use "
                                 "this skill (skill skipped)"))
      << join(d);
  bool colon_reported = false;
  for (const auto& x : d)
    if (x.path == base + "/colon/SKILL.md" && x.line == 3 && x.severity == Diagnostic::Severity::Error &&
        x.message.rfind("invalid YAML:", 0) == 0)
      colon_reported = true;
  EXPECT_TRUE(colon_reported) << join(d);
  for (const auto& x : d) EXPECT_EQ(x.severity, Diagnostic::Severity::Error) << x.to_string();
  EXPECT_TRUE(e->session_view(t.project()).skills.size() == 1);  // only the built-in one
  EXPECT_FALSE(e->failed());  // a broken skill does not fail the whole load
}

TEST(EngineSkills, MalformedSkillsElsewhereAreSkippedAsWarnings) {
  Tree t;
  t.write("home/.claude/skills/bad/SKILL.md", "---\nname: BAD\ndescription: x\n---\n");
  t.write("project/.agents/skills/bad2/SKILL.md", "no frontmatter\n");
  t.skill("project/.agents/skills/good", "good", "Use for good things.");
  Diagnostics d;
  auto e = t.load(d);
  ASSERT_EQ(d.size(), 1u) << join(d);
  EXPECT_EQ(d[0].to_string(), (t.home() / ".claude/skills/bad/SKILL.md").string() +
                                  ":2: warning: name 'BAD' is invalid: use lowercase letters, digits and single "
                                  "hyphens (like release-notes) (skill skipped)");
  auto v = e->session_view(t.project());
  ASSERT_EQ(v.diagnostics.size(), 1u);
  EXPECT_EQ(v.diagnostics[0].severity, Diagnostic::Severity::Warning);
  EXPECT_EQ(v.diagnostics[0].path, (t.project() / ".agents/skills/bad2/SKILL.md").string());
  EXPECT_NE(by_name(v.skills, "good"), nullptr);
}

TEST(EngineSkills, SevenPlacesInOrderFirstOneWins) {
  Tree t;
  // The same name in every place but the built-in one; each copy says where it is.
  t.skill("project/.agents/skills/dup", "dup", "from project agents");
  t.skill("project/.claude/skills/dup", "dup", "from project claude");
  t.skill("config/skills/dup", "dup", "from private");
  t.skill("home/.agents/skills/dup", "dup", "from home agents");
  t.skill("home/.claude/skills/dup", "dup", "from home claude");
  // One name per place, to check the order of the list.
  t.skill("project/.agents/skills/a1", "a1", "x");
  t.skill("project/.claude/skills/a2", "a2", "x");
  t.skill("config/skills/a3", "a3", "x");
  t.write("config/plugins/pl/.openvaala-plugin/plugin.yaml", "name: pl\n");
  t.skill("config/plugins/pl/skills/dup", "dup", "plugin dup");
  t.skill("home/.agents/skills/a6", "a6", "x");
  t.skill("home/.claude/skills/a7", "a7", "x");
  Diagnostics d;
  auto e = t.load(d);
  auto v = e->session_view(t.project());
  EXPECT_EQ(names(v.skills), (std::vector<std::string>{"a1", "dup", "a2", "a3", "openvaala", "pl:dup", "a6", "a7"}))
      << join(d);
  EXPECT_EQ(by_name(v.skills, "dup")->description, "from project agents");
  EXPECT_EQ(by_name(v.skills, "dup")->source, SkillSource::ProjectAgents);
  std::vector<std::string> shadowed_from;
  for (const auto& s : v.shadowed) shadowed_from.push_back(s->description);
  EXPECT_EQ(shadowed_from, (std::vector<std::string>{"from project claude", "from private", "from home agents",
                                                     "from home claude"}));
  // Without the project copies, the private one wins.
  auto v2 = e->session_view(t.root());
  EXPECT_EQ(by_name(v2.skills, "dup")->description, "from private");
  // A plugin skill never shadows a bare name.
  EXPECT_EQ(by_name(v.skills, "pl:dup")->plugin, "pl");
}

TEST(EngineSkills, RecursiveSearchStopsBelowASkill) {
  Tree t;
  t.skill("config/skills/x", "x", "outer");
  t.skill("config/skills/x/sub", "inner", "inner");
  t.skill("config/skills/group/y", "y", "nested in a group");
  t.skill("config/skills/group/deeper/z", "z", "two levels");
  t.skill("config/skills/.hidden/h", "h", "hidden");
  Diagnostics d;
  auto v = t.load(d)->session_view(t.project());
  EXPECT_NE(by_name(v.skills, "x"), nullptr);
  EXPECT_EQ(by_name(v.skills, "inner"), nullptr);
  EXPECT_NE(by_name(v.skills, "y"), nullptr);
  EXPECT_NE(by_name(v.skills, "z"), nullptr);
  EXPECT_EQ(by_name(v.skills, "h"), nullptr);
}

TEST(EngineSkills, SymlinkedSkillFoldersAndLoopsDoNotHang) {
  Tree t;
  t.skill("elsewhere/linked", "linked", "through a symlink");
  t.symlink((t.root() / "elsewhere/linked").string(), "config/skills/linked");
  // A loop: config/skills/loop/again -> config/skills/loop; and a self link.
  fs::create_directories(t.config() / "skills/loop");
  t.symlink((t.config() / "skills/loop").string(), "config/skills/loop/again");
  t.symlink(".", "config/skills/loop/self");
  t.skill("config/skills/loop/inside", "inside", "in the loop folder");
  // Two links to one target: loaded once.
  t.symlink((t.root() / "elsewhere/linked").string(), "config/skills/linked-again");
  auto start = std::chrono::steady_clock::now();
  Diagnostics d;
  auto v = t.load(d)->session_view(t.project());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  const Skill* s = by_name(v.skills, "linked");
  ASSERT_NE(s, nullptr) << join(d);
  EXPECT_EQ(s->file, t.config() / "skills/linked/SKILL.md");
  EXPECT_NE(by_name(v.skills, "inside"), nullptr);
  EXPECT_TRUE(v.shadowed.empty());
  EXPECT_FALSE(runtime::config::has_errors(d)) << join(d);
}

TEST(EngineSkills, OneMegabyteLimit) {
  Tree t;
  const std::string head = "---\nname: NAME\ndescription: big\n---\n";
  auto make = [&](const std::string& name, std::size_t total) {
    std::string h = head;
    h.replace(h.find("NAME"), 4, name);
    std::string body(total - h.size(), 'x');
    t.write("config/skills/" + name + "/SKILL.md", h + body);
  };
  make("exactly", 1024 * 1024);
  make("over", 1024 * 1024 + 1);
  Diagnostics d;
  auto v = t.load(d)->session_view(t.project());
  EXPECT_NE(by_name(v.skills, "exactly"), nullptr);
  EXPECT_EQ(by_name(v.skills, "over"), nullptr);
  EXPECT_TRUE(contains(d, (t.config() / "skills/over/SKILL.md").string() +
                              ": the file is 1048577 bytes; SKILL.md files over 1 MB (1048576 bytes) are not read "
                              "(skill skipped)"))
      << join(d);
}

TEST(EngineSkills, SkillsDirectorySettingReplacesTheDefaultPrivateDir) {
  Tree t;
  t.write("config/config.yaml", "skills:\n  directory: ~/my-skills\n");
  t.skill("home/my-skills/mine", "mine", "mine");
  t.skill("config/skills/unused", "unused", "x");
  Diagnostics d;
  auto v = t.load(d)->session_view(t.project());
  ASSERT_NE(by_name(v.skills, "mine"), nullptr) << join(d);
  EXPECT_EQ(by_name(v.skills, "mine")->source, SkillSource::Private);
  EXPECT_EQ(by_name(v.skills, "unused"), nullptr);
}

TEST(EngineSkills, BuiltinSkillIsTheEmbeddedDocumentation) {
  std::ifstream in(std::string(OPENVAALA_SOURCE_DIR) + "/runtime/builtin_skills/openvaala/SKILL.md", std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(file, std::string(builtin_openvaala_skill()))
      << "run runtime/builtin_skills/embed.sh after editing SKILL.md";
  Tree t;
  Diagnostics d;
  auto v = t.load(d)->session_view(t.project());
  const Skill* s = by_name(v.skills, "openvaala");
  ASSERT_NE(s, nullptr) << join(d);
  EXPECT_EQ(s->source, SkillSource::Builtin);
  EXPECT_TRUE(fs::exists(s->file));
  EXPECT_TRUE(d.empty()) << join(d);
}

TEST(EngineSkills, FastFrontmatterAgreesWithYaml) {
  using detail::fast_frontmatter;
  auto f = fast_frontmatter("name: a-b\ndescription: Use when x, y; or z (see C#).\n# comment\n");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->at("description").value, "Use when x, y; or z (see C#).");
  EXPECT_EQ(f->at("description").line, 2);
  EXPECT_FALSE(fast_frontmatter("description: Use when: x\n"));
  EXPECT_FALSE(fast_frontmatter("description: 'quoted'\n"));
  EXPECT_FALSE(fast_frontmatter("description: >\n  folded\n"));
  EXPECT_FALSE(fast_frontmatter("description: a # comment\n"));
  EXPECT_FALSE(fast_frontmatter("name: a\nname: b\n"));
  EXPECT_FALSE(fast_frontmatter("description: null\n"));
  EXPECT_FALSE(fast_frontmatter("null: \n")) << "YAML reads the key as null (engine_fuzz found it)";
  EXPECT_FALSE(fast_frontmatter("name: a\nNULL: x\n"));
  // Folded descriptions go through YAML and still work.
  Tree t;
  t.write("config/skills/folded/SKILL.md", "---\nname: folded\ndescription: >\n  Use when\n  folding.\n---\n");
  Diagnostics d;
  auto v = t.load(d)->session_view(t.project());
  ASSERT_NE(by_name(v.skills, "folded"), nullptr) << join(d);
  EXPECT_EQ(by_name(v.skills, "folded")->description, "Use when folding.");
}

// ---- the session's view: agents, prompt text, slash commands

TEST(EngineSkills, AgentSkillsListFiltersAndSlashCommands) {
  Tree t;
  t.skill("config/skills/release-notes", "release-notes", "Use when drafting release notes.");
  t.skill("config/skills/other", "other", "Something else.");
  t.write("config/plugins/review/.openvaala-plugin/plugin.yaml", "name: review\nversion: 1.2.0\n");
  t.skill("config/plugins/review/skills/checklist", "checklist", "Use for review checklists.");
  t.write("config/agents/writer.yaml",
          "description: Writes docs\ninstructions: Be brief.\nskills: [release-notes, review:checklist]\n");
  Diagnostics d;
  auto e = t.load(d);
  auto v = e->session_view(t.project(), "writer");
  EXPECT_EQ(names(v.skills), (std::vector<std::string>{"release-notes", "review:checklist"})) << join(d);
  EXPECT_EQ(names(v.not_for_agent), (std::vector<std::string>{"other", "openvaala"}));

  auto cmds = v.available_commands();
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_EQ(cmds[1].name, "review:checklist");
  EXPECT_EQ(cmds[1].description, "Use for review checklists.");
  EXPECT_FALSE(cmds[1].input_hint.empty());

  auto x = expand_slash_command(v, "/release-notes for v1.2\nand mention the fix");
  EXPECT_EQ(x.kind, SlashExpansion::Kind::Expanded);
  EXPECT_EQ(x.skill, "release-notes");
  EXPECT_NE(x.text.find("Body of release-notes"), std::string::npos);
  EXPECT_NE(x.text.find("User request: for v1.2\nand mention the fix"), std::string::npos);
  EXPECT_NE(x.text.find((t.config() / "skills/release-notes/SKILL.md").string()), std::string::npos);

  auto p = expand_slash_command(v, "/review:checklist");
  EXPECT_EQ(p.kind, SlashExpansion::Kind::Expanded);
  EXPECT_NE(p.text.find("Body of checklist"), std::string::npos);
  auto ps = expand_slash_command(v, "/skill:review:checklist go");
  EXPECT_EQ(ps.kind, SlashExpansion::Kind::Expanded);

  // `/name` with no such skill (for this agent) is plain text.
  auto u = expand_slash_command(v, "/other thing");
  EXPECT_EQ(u.kind, SlashExpansion::Kind::Unchanged);
  EXPECT_EQ(u.text, "/other thing");
  EXPECT_EQ(expand_slash_command(v, "/usr/bin/env is a path").kind, SlashExpansion::Kind::Unchanged);
  EXPECT_EQ(expand_slash_command(v, "no slash").kind, SlashExpansion::Kind::Unchanged);

  // `/skill:name` is refused.
  auto r = expand_slash_command(v, "/skill:other thing");
  EXPECT_EQ(r.kind, SlashExpansion::Kind::Refused);
  EXPECT_EQ(r.error,
            "The skill 'other' is not available to the agent 'writer' (it is not in the agent's skills list). "
            "Available skills: release-notes review:checklist.");
  auto r2 = expand_slash_command(v, "/skill:nope");
  EXPECT_EQ(r2.kind, SlashExpansion::Kind::Refused);
  EXPECT_EQ(r2.error.rfind("There is no skill named 'nope' available to the agent 'writer'.", 0), 0u);

  // The system prompt block: instructions, skills with paths.
  auto block = v.system_prompt_block();
  EXPECT_NE(block.find("# Instructions\nBe brief."), std::string::npos);
  EXPECT_NE(block.find("- release-notes: Use when drafting release notes. (file: " +
                       (t.config() / "skills/release-notes/SKILL.md").string() + ")"),
            std::string::npos);
  EXPECT_EQ(block.find("- other:"), std::string::npos);

  // The default agent sees everything.
  auto all = e->session_view(t.project());
  EXPECT_EQ(all.agent.name, "default");
  EXPECT_EQ(all.skills.size(), 4u);
}

TEST(EngineSkills, AgentsAreOfferedWithTheDefault) {
  Tree t;
  t.write("config/config.yaml", "default_agent: coder\n");
  t.write("config/agents/coder.yaml", "name: coder\ndescription: Writes code\nmodel: main/gpt-4.1\n");
  t.write("config/agents/Bad.yaml", "description: x\n");
  t.write("config/agents/typo.yaml", "name: other\n");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_EQ(e->default_agent(), "coder");
  ASSERT_EQ(e->agents().size(), 2u) << join(d);  // coder + built-in default
  EXPECT_EQ(e->agent_or_default(""), "coder");
  EXPECT_EQ(e->agent_or_default("ghost"), "coder");
  EXPECT_TRUE(contains(d, (t.config() / "agents/typo.yaml").string() +
                              ":1: name 'other' does not match the file name 'typo.yaml'"))
      << join(d);
  EXPECT_TRUE(contains(d, (t.config() / "agents/Bad.yaml").string() +
                              ": the agent name 'Bad' (the file name) is invalid: use lowercase letters, digits and "
                              "single hyphens"))
      << join(d);
  EXPECT_EQ(e->session_view(t.project()).agent.name, "coder");
  EXPECT_EQ(*e->session_view(t.project()).agent.model, "main/gpt-4.1");
}

TEST(EngineSkills, UnknownDefaultAgentIsReported) {
  Tree t;
  t.write("config/config.yaml", "# comment\ndefault_agent: ghost\n");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_TRUE(contains(d, (t.config() / "config.yaml").string() +
                              ":2: default_agent 'ghost' is not an agent in agents/ (available: default)"))
      << join(d);
  EXPECT_EQ(e->default_agent(), "default");
}

TEST(EngineSkills, ArgumentHintIsTheSlashCommandsInputHint) {
  Tree t;
  t.write("config/skills/fix-issue/SKILL.md", "---\ndescription: Fixes an issue.\nargument-hint: [issue-number]\n---\n");
  t.write("config/skills/tag/SKILL.md", "---\ndescription: Tags.\nargument-hint: add <tag> | remove <tag>\n---\n");
  t.write("config/skills/plain/SKILL.md", "---\ndescription: No hint.\n---\n");
  t.write("config/skills/odd-hint/SKILL.md", "---\ndescription: Odd.\nargument-hint: {a: 1}\n---\n");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_FALSE(runtime::config::has_errors(d)) << "a hint that is not text is left out, not an error: " << join(d);
  auto cmds = e->session_view(t.project()).available_commands();
  auto hint_of = [&](const std::string& name) -> std::string {
    for (const auto& c : cmds)
      if (c.name == name) return c.input_hint;
    ADD_FAILURE() << "no command /" << name;
    return "";
  };
  EXPECT_EQ(hint_of("fix-issue"), "[issue-number]") << "argument-hint: [x] (a YAML list) is shown as written";
  EXPECT_EQ(hint_of("tag"), "add <tag> | remove <tag>") << "a text argument-hint is the command's input hint";
  EXPECT_EQ(hint_of("plain"), "what you want done with this skill (optional)") << "without one, the generic hint";
  EXPECT_EQ(hint_of("odd-hint"), "what you want done with this skill (optional)");
}
