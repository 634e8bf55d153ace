// AGENTS.md: the chain from the git root to cwd, deeper files on read, each file once.
#include <gtest/gtest.h>

#include "engine_test_util.hpp"

using namespace runtime::engine;
using engine_test::Tree;
using runtime::config::Diagnostics;

namespace {
std::vector<std::string> paths(const std::vector<AgentsMdFile>& v, const fs::path& base) {
  std::vector<std::string> out;
  for (const auto& f : v) out.push_back(f.path.lexically_relative(base).string());
  return out;
}
}  // namespace

TEST(EngineAgentsMd, ChainFromGitRootToCwd) {
  Tree t;
  fs::create_directories(t.p("outer/repo/.git"));
  t.write("outer/AGENTS.md", "above the repo: never read\n");
  t.write("outer/repo/AGENTS.md", "root rules\n");
  t.write("outer/repo/a/AGENTS.md", "a rules\n");
  t.write("outer/repo/a/b/AGENTS.md", "b rules\n");
  t.write("outer/repo/a/b/CLAUDE.md", "not read\n");
  auto chain = load_agents_md_chain(t.p("outer/repo/a/b"));
  EXPECT_EQ(paths(chain, t.p("outer")),
            (std::vector<std::string>{"repo/AGENTS.md", "repo/a/AGENTS.md", "repo/a/b/AGENTS.md"}));
  auto text = agents_md_prompt(chain);
  EXPECT_NE(text.find("## " + t.p("outer/repo/AGENTS.md").string() + "\n\nroot rules"), std::string::npos);
  EXPECT_NE(text.find("## " + t.p("outer/repo/a/b/AGENTS.md").string() +
                      " (deeper: takes precedence over the files above)\n\nb rules"),
            std::string::npos);
  EXPECT_EQ(text.find("## " + t.p("outer/repo/AGENTS.md").string() + " (deeper"), std::string::npos);
  EXPECT_EQ(text.find("above the repo"), std::string::npos);
}

TEST(EngineAgentsMd, GitFileWorktreeAndNoRepository) {
  Tree t;
  t.write("wt/.git", "gitdir: /somewhere/else\n");
  t.write("wt/AGENTS.md", "worktree root\n");
  t.write("wt/sub/AGENTS.md", "sub\n");
  EXPECT_EQ(find_git_root(t.p("wt/sub")), t.p("wt"));
  EXPECT_EQ(load_agents_md_chain(t.p("wt/sub")).size(), 2u);
  // Outside a repository only cwd's own file counts (the tree is under /tmp, not in a repo).
  t.write("plain/AGENTS.md", "parent\n");
  t.write("plain/child/AGENTS.md", "child\n");
  if (find_git_root(t.p("plain/child")).empty()) {
    auto chain = load_agents_md_chain(t.p("plain/child"));
    ASSERT_EQ(chain.size(), 1u);
    EXPECT_EQ(chain[0].content, "child\n");
  }
}

TEST(EngineAgentsMd, EmptyFilesAreLeftOut) {
  Tree t;
  fs::create_directories(t.p("r/.git"));
  t.write("r/AGENTS.md", "  \n\n");
  t.write("r/x/AGENTS.md", "x\n");
  EXPECT_EQ(paths(load_agents_md_chain(t.p("r/x")), t.p("r")), (std::vector<std::string>{"x/AGENTS.md"}));
}

TEST(EngineAgentsMd, DeeperFilesJoinWhenReadOnce) {
  Tree t;
  fs::create_directories(t.p("r/.git"));
  t.write("r/AGENTS.md", "root\n");
  t.write("r/a/b/AGENTS.md", "b\n");
  t.write("r/a/b/c/AGENTS.md", "c\n");
  t.write("r/a/b/c/file.txt", "data\n");
  t.write("r/other/AGENTS.md", "sibling\n");
  Diagnostics d;
  auto e = runtime::engine::Engine::load(t.options(), d);
  auto v = e->session_view(t.p("r"));
  ASSERT_EQ(v.agents_md.size(), 1u);
  std::set<fs::path> included{v.agents_md[0].path};
  auto add = agents_md_for_read(v, t.p("r/a/b/c/file.txt"), included);
  EXPECT_EQ(paths(add, t.p("r")), (std::vector<std::string>{"a/b/AGENTS.md", "a/b/c/AGENTS.md"}));
  for (const auto& f : add) included.insert(f.path);
  EXPECT_TRUE(agents_md_for_read(v, "a/b/c/file.txt", included).empty());  // each file once; relative path
  // Outside cwd (cwd = r/a): the sibling is not between cwd and the file.
  auto va = e->session_view(t.p("r/a"));
  EXPECT_TRUE(agents_md_for_read(va, t.p("r/other/x.txt"), {}).empty());
  EXPECT_EQ(paths(agents_md_for_read(va, t.p("r/a/b/c"), {}), t.p("r")),
            (std::vector<std::string>{"a/b/AGENTS.md", "a/b/c/AGENTS.md"}));
}
