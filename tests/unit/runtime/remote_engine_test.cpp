// The engine on a remote executor (DESIGN §10): skills and AGENTS.md read there follow the local
// search rules; what the remote command prints is parsed exactly; an MCP server's executor is
// part of what makes two sessions share its process.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "engine_test_util.hpp"
#include "runtime/agent/remote/executor_files.hpp"
#include "runtime/mcp/mcp_server.hpp"

using namespace runtime::engine;
using engine_test::join;
using engine_test::Tree;
using runtime::config::Diagnostics;

namespace {

std::string skill_md(const std::string& name) { return "---\nname: " + name + "\ndescription: about " + name + "\n---\nBody of " + name + "\n"; }

std::vector<std::string> names(const SessionView& v) {
  std::vector<std::string> out;
  for (const auto& s : v.skills) out.push_back(s->name);
  return out;
}

const Skill* find(const SessionView& v, const std::string& name) {
  for (const auto& s : v.skills)
    if (s->name == name) return s.get();
  return nullptr;
}

}  // namespace

TEST(RemoteSkills, FollowTheLocalSearchRulesAndReplaceTheLocalProjectAndHomeOnes) {
  Tree t;
  t.skill("work/.agents/skills/local-proj", "local-proj", "a local project skill");
  t.skill("home/.agents/skills/local-home", "local-home", "a local home skill");
  t.skill("config/skills/private-one", "private-one", "a private skill");
  Diagnostics d;
  auto e = t.load(d);
  ASSERT_TRUE(d.empty()) << join(d);

  ExecutorSnapshot snap;
  snap.executor = "devbox";
  snap.workdir = "/r/wd";
  snap.home = "/r/home";
  snap.skill_files = {
      {"/r/wd/.agents/skills/b-skill/SKILL.md", skill_md("b-skill")},
      {"/r/wd/.agents/skills/b-skill/A/SKILL.md", skill_md("below-a-skill")},  // sorts before its parent's
      {"/r/wd/.agents/skills/.hidden/x/SKILL.md", skill_md("hidden-one")},
      {"/r/wd/.agents/skills/group/a-skill/SKILL.md", skill_md("a-skill")},
      {"/r/home/.claude/skills/remote-home/SKILL.md", skill_md("remote-home")},
      {"/r/wd/.claude/skills/broken/SKILL.md", "no frontmatter\n"},
  };
  snap.agents_md = {{"/r/wd/AGENTS.md", "remote rules\n"}};
  auto v = e->session_view(t.root() / "work", "", &snap);

  auto n = names(v);
  EXPECT_EQ(std::count(n.begin(), n.end(), "b-skill"), 1) << ::testing::PrintToString(n);
  EXPECT_EQ(std::count(n.begin(), n.end(), "a-skill"), 1) << "skills are found recursively";
  EXPECT_EQ(std::count(n.begin(), n.end(), "below-a-skill"), 0) << "a folder with SKILL.md is not searched further";
  EXPECT_EQ(std::count(n.begin(), n.end(), "hidden-one"), 0) << "hidden folders are skipped";
  EXPECT_EQ(std::count(n.begin(), n.end(), "remote-home"), 1) << "the remote home's skills count";
  EXPECT_EQ(std::count(n.begin(), n.end(), "local-proj"), 0) << "the local working directory is not the session's";
  EXPECT_EQ(std::count(n.begin(), n.end(), "local-home"), 0) << "the local home is not the session's";
  EXPECT_EQ(std::count(n.begin(), n.end(), "private-one"), 1) << "private skills stay";
  EXPECT_FALSE(v.diagnostics.empty()) << "a broken remote skill is reported (and skipped)";

  const Skill* b = find(v, "b-skill");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->file, "/r/wd/.agents/skills/b-skill/SKILL.md");
  EXPECT_EQ(b->executor, "devbox");
  ASSERT_TRUE(b->text);
  const Skill* builtin = find(v, "openvaala");
  ASSERT_NE(builtin, nullptr);
  EXPECT_EQ(builtin->executor, "openvaala");
  EXPECT_EQ(builtin->file, "/skills/openvaala/SKILL.md");
  EXPECT_EQ(find(v, "private-one")->executor, "local");

  auto prompt = v.skills_prompt();
  EXPECT_NE(prompt.find("(file: /r/wd/.agents/skills/b-skill/SKILL.md)"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("/skills/openvaala/SKILL.md, executor: openvaala)"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("private-one/SKILL.md, executor: local)"), std::string::npos) << prompt;

  auto x = expand_slash_command(v, "/b-skill now");
  EXPECT_EQ(x.kind, SlashExpansion::Kind::Expanded) << x.error;
  EXPECT_NE(x.text.find("Body of b-skill"), std::string::npos) << "the remote text, never a local read";

  ASSERT_EQ(v.agents_md.size(), 1u);
  EXPECT_EQ(v.agents_md[0].path, "/r/wd/AGENTS.md");
}

TEST(RemoteSkills, ParseWhatTheRemoteCommandPrinted) {
  const std::string out =
      "OVWD /r/wd\nOVHOME /r/home\n"
      "OVFILE S 12 /r/wd/.agents/skills/x/SKILL.md\nline1\nline2\n\n"
      "OVFILE A 3 /r/AGENTS.md\n  \n\n"  // whitespace only: left out
      "OVFILE A 6 /r/wd/AGENTS.md\nrules\n\n"
      "OVFILE A 99 /r/cut/AGENTS.md\nshort\n";  // cut short: not taken
  auto s = runtime::parse_executor_files("devbox", out);
  EXPECT_EQ(s.executor, "devbox");
  EXPECT_EQ(s.workdir, "/r/wd");
  EXPECT_EQ(s.home, "/r/home");
  ASSERT_EQ(s.skill_files.size(), 1u);
  EXPECT_EQ(s.skill_files.begin()->second, "line1\nline2\n");
  ASSERT_EQ(s.agents_md.size(), 1u);
  EXPECT_EQ(s.agents_md[0].path, "/r/wd/AGENTS.md");
  EXPECT_EQ(s.agents_md[0].content, "rules\n");
}

TEST(McpServerPool, TheExecutorIsPartOfTheSharingKey) {
  boost::asio::io_context io;
  runtime::mcp::McpServer::Env env{io.get_executor(), {}, {"/w"}};
  bridge::mcp::ServerSpec local;
  local.id = "s";
  local.transport = bridge::mcp::StdioSpec{"node", {"server.mjs"}, {}, "/w"};
  auto remote = local;
  remote.executor = "devbox";
  runtime::mcp::McpServerPool pool;
  auto a = pool.acquire(local, env);
  auto b = pool.acquire(remote, env);
  auto c = pool.acquire(local, env);
  EXPECT_NE(a, b) << "the same server on another executor is another process";
  EXPECT_EQ(a, c) << "the same server on the same executor is shared";
  pool.release(a);
  pool.release(b);
  pool.release(c);
}
