// `openvaala plugin ...`: install from a real git repository and a folder, list, enable/disable
// through plugins.disabled, update, uninstall, and the roll-back when the config would not load.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "bridge/process/child_process.hpp"
#include "engine_test_util.hpp"
#include "runtime/engine/plugin_manager.hpp"

using namespace runtime::engine;
using engine_test::join;
using engine_test::Tree;
using runtime::config::Diagnostics;

namespace {

std::string git(const fs::path& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                                   "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"};
  argv.insert(argv.end(), args.begin(), args.end());
  bridge::process::ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = dir.string();
  auto r = bridge::process::run_process(spec);
  EXPECT_EQ(r.exit_code, 0) << r.spawn_error << r.stderr_data;
  return r.stdout_data;
}

// A repository with a plugin in plugins/review, tagged v1.0.0, then a second commit.
fs::path make_repo(const Tree& t) {
  fs::path repo = t.p("repo");
  t.write("repo/plugins/review/.openvaala-plugin/plugin.yaml", "name: review\nversion: 1.0.0\n");
  t.skill("repo/plugins/review/skills/checklist", "checklist", "Use for review checklists.");
  t.write("repo/README.md", "not a plugin\n");
  git(repo, {"init", "-q"});
  git(repo, {"add", "."});
  git(repo, {"commit", "-q", "-m", "one"});
  git(repo, {"tag", "v1.0.0"});
  return repo;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST(EnginePluginManager, InstallFromGitListDisableEnableUpdateUninstall) {
  Tree t;
  fs::path repo = make_repo(t);
  // A second commit after the tag, so --ref v1.0.0 installs the older one.
  t.write("repo/plugins/review/.openvaala-plugin/plugin.yaml", "name: review\nversion: 1.1.0\n");
  git(repo, {"commit", "-q", "-am", "two"});

  PluginManager pm(t.options());
  auto r = pm.install("file://" + repo.string(), "plugins/review", "v1.0.0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.changed);
  fs::path dir = t.config() / "plugins/review";
  EXPECT_TRUE(fs::exists(dir / ".openvaala-plugin/plugin.yaml"));
  EXPECT_FALSE(fs::exists(dir / ".git"));
  auto rec = read(dir / ".openvaala-install.yaml");
  EXPECT_NE(rec.find("source: \"file://" + repo.string() + "\""), std::string::npos) << rec;
  EXPECT_NE(rec.find("ref: \"v1.0.0\""), std::string::npos) << rec;
  EXPECT_NE(rec.find("path: \"plugins/review\""), std::string::npos) << rec;
  EXPECT_NE(rec.find("commit: \""), std::string::npos);

  auto l = pm.list();
  EXPECT_EQ(l.out.substr(0, l.out.find('\n')).find("review  1.0.0    enabled   file://"), 0u) << l.out;

  // Installing again is refused.
  auto again = pm.install("file://" + repo.string(), "plugins/review", "");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("a plugin 'review' is already installed"), std::string::npos) << again.err;

  // disable / enable edit plugins.disabled and keep the rest of config.yaml.
  t.write("config/config.yaml", "# my settings\nmax_turn_requests: 50  # keep this\n");
  ASSERT_EQ(pm.disable("review").exit_code, 0);
  EXPECT_EQ(read(t.config() / "config.yaml"),
            "# my settings\nmax_turn_requests: 50  # keep this\nplugins:\n  disabled: [review]\n");
  EXPECT_NE(pm.list().out.find("disabled"), std::string::npos);
  EXPECT_EQ(pm.disable("review").out, "review is already disabled\n");
  ASSERT_EQ(pm.enable("review").exit_code, 0);
  EXPECT_EQ(read(t.config() / "config.yaml"),
            "# my settings\nmax_turn_requests: 50  # keep this\nplugins:\n  disabled: []\n");

  // update: the record has --ref v1.0.0, so it is up to date; move the tag and it updates.
  auto u = pm.update(std::nullopt);
  EXPECT_EQ(u.exit_code, 0) << u.err;
  EXPECT_NE(u.out.find("review: already up to date"), std::string::npos) << u.out;
  git(repo, {"tag", "-f", "v1.0.0"});
  u = pm.update(std::string("review"));
  ASSERT_EQ(u.exit_code, 0) << u.err;
  EXPECT_NE(u.out.find("review: updated to "), std::string::npos) << u.out;
  Diagnostics d;
  EXPECT_EQ(t.load(d)->find_plugin("review")->version, "1.1.0");

  ASSERT_EQ(pm.uninstall("review").exit_code, 0);
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_EQ(pm.uninstall("review").exit_code, 1);
}

TEST(EnginePluginManager, InstallFromAFolderAndRollBackABrokenOne) {
  Tree t;
  t.write("src/good/.claude-plugin/plugin.json", R"({"name": "good", "version": "2.0.0"})");
  t.skill("src/good/skills/s", "s", "x");
  t.write("src/broken/.openvaala-plugin/plugin.yaml", "name: broken\nunknown_key: 1\n");
  PluginManager pm(t.options());
  auto r = pm.install(t.p("src/good").string(), "", "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read(t.config() / "plugins/good/.openvaala-install.yaml").find("source: \"" + t.p("src/good").string()),
            std::string::npos);
  auto b = pm.install(t.p("src/broken").string(), "", "");
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_NE(b.err.find("unknown key 'unknown_key' in plugin.yaml"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("the configuration does not load after this change; the plugin was not installed"),
            std::string::npos)
      << b.err;
  EXPECT_FALSE(fs::exists(t.config() / "plugins/broken"));
  // --ref needs git.
  auto ref = pm.install(t.p("src/good").string(), "", "main");
  EXPECT_EQ(ref.exit_code, 1);
  EXPECT_NE(ref.err.find("--ref works only with git sources"), std::string::npos) << ref.err;
  // No manifest.
  fs::create_directories(t.p("src/empty"));
  auto none = pm.install(t.p("src/empty").string(), "", "");
  EXPECT_NE(none.err.find("no plugin manifest in"), std::string::npos) << none.err;
}

TEST(EnginePluginManager, BrokenPluginCanStillBeDisabledAndUninstalled) {
  Tree t;
  t.write("config/plugins/bad/.openvaala-plugin/plugin.yaml", "name: [\n");
  {
    Diagnostics d;
    ASSERT_TRUE(t.load(d)->failed());
  }
  PluginManager pm(t.options());
  auto r = pm.disable("bad");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Diagnostics d;
  EXPECT_FALSE(t.load(d)->failed()) << join(d);
  ASSERT_EQ(pm.uninstall("bad").exit_code, 0);
  EXPECT_EQ(read(t.config() / "config.yaml"), "plugins:\n  disabled: []\n");
}

// While config.yaml does not load (the user is fixing it), `plugin enable/disable` must still see
// the plugins it disables, in either list style, or a disable would re-enable the others.
TEST(EnginePluginManager, TheDisabledListOfAConfigYamlThatDoesNotLoadIsReadLeniently) {
  Tree t;
  const std::vector<std::string> both{"alpha", "beta"};
  t.write("config/config.yaml", "model: [unclosed\nplugins:\n  disabled:\n    - alpha\n    - beta  \nother: 1\n");
  EXPECT_EQ(read_plugins_disabled(t.config() / "config.yaml"), both) << "a block list (`- name` lines) under plugins.disabled";
  t.write("config/config.yaml", "model: [unclosed\nplugins:\n  disabled: [alpha, beta] # two\n");
  EXPECT_EQ(read_plugins_disabled(t.config() / "config.yaml"), both) << "a flow list under plugins.disabled";
  t.write("config/config.yaml", "model: [unclosed\nagents:\n  - alpha\n");
  EXPECT_TRUE(read_plugins_disabled(t.config() / "config.yaml").empty()) << "`- x` lines outside plugins: are not plugins";
}

TEST(EnginePluginManager, DisableRefusedWhileAnAgentUsesThePluginServer) {
  Tree t;
  t.write("config/plugins/docs/.openvaala-plugin/plugin.yaml",
          "name: docs\nmcp_servers:\n  - id: docs-server\n    type: stdio\n    command: node\n");
  t.write("config/agents/writer.yaml", "mcp_servers: [docs-server]\n");
  PluginManager pm(t.options());
  auto r = pm.disable("docs");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "openvaala: the agent 'writer' (" + (t.config() / "agents/writer.yaml").string() +
                       ") uses the MCP server 'docs-server' of the plugin 'docs'; remove it from that agent's "
                       "mcp_servers first\n");
  EXPECT_EQ(pm.uninstall("docs").exit_code, 1);
  EXPECT_TRUE(fs::exists(t.config() / "plugins/docs"));
  // Once a file in mcp_servers/ replaces the server, the plugin's entry is unused.
  t.write("config/mcp_servers/docs-server.yaml", "id: docs-server\ntype: stdio\ncommand: other\n");
  EXPECT_EQ(pm.disable("docs").exit_code, 0);
}

TEST(EnginePluginManager, PluginsDisabledTextEdits) {
  EXPECT_EQ(edit_plugins_disabled("", {"a"}), "plugins:\n  disabled: [a]\n");
  EXPECT_EQ(edit_plugins_disabled("model: x/y\n", {"a", "b"}), "model: x/y\nplugins:\n  disabled: [a, b]\n");
  EXPECT_EQ(edit_plugins_disabled("plugins:\n    disabled: [a] # c\nmodel: x/y\n", {}),
            "plugins:\n    disabled: []\nmodel: x/y\n");
  EXPECT_EQ(edit_plugins_disabled("plugins:\n  disabled:\n    - a\n    - b\n# end\nmodel: x/y\n", {"b"}),
            "plugins:\n  disabled: [b]\n# end\nmodel: x/y\n");
  EXPECT_EQ(edit_plugins_disabled("plugins:\n  # note\nmodel: m/n\n", {"z"}),
            "plugins:\n  disabled: [z]\n  # note\nmodel: m/n\n");
  EXPECT_EQ(edit_plugins_disabled("plugins: {disabled: [a]}\n", {}), "plugins: {disabled: []}\n");
}

// Issue 13: `plugin disable` replaced a symlinked config.yaml (dotfile managers) with a regular
// file; `login` kept the link. Both now write through the one atomic writer.
TEST(EnginePluginManager, DisableWritesThroughASymlinkedConfigYaml) {
  Tree t;
  t.write("config/plugins/review/.openvaala-plugin/plugin.yaml", "name: review\n");
  fs::path target = t.write("dotfiles/openvaala/config.yaml", "# mine\nmax_turn_requests: 50\n");
  ::chmod(target.c_str(), 0640);
  fs::create_symlink(target, t.config() / "config.yaml");
  PluginManager pm(t.options());
  auto r = pm.disable("review");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(t.config() / "config.yaml"));
  EXPECT_EQ(fs::read_symlink(t.config() / "config.yaml"), target);
  EXPECT_EQ(read(target), "# mine\nmax_turn_requests: 50\nplugins:\n  disabled: [review]\n");
  struct stat st{};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  ASSERT_EQ(pm.enable("review").exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(t.config() / "config.yaml"));
  EXPECT_EQ(read(target), "# mine\nmax_turn_requests: 50\nplugins:\n  disabled: []\n");
  // Nothing else was left beside either file.
  EXPECT_EQ(std::distance(fs::directory_iterator(target.parent_path()), fs::directory_iterator()), 1);
}

// A rolled-back change goes through the same writer: the link stays and the target gets its old text.
TEST(EnginePluginManager, RollBackKeepsTheSymlinkedConfigYaml) {
  Tree t;
  t.write("config/plugins/bad/.openvaala-plugin/plugin.yaml", "name: [\n");
  fs::path target = t.write("dotfiles/config.yaml", "plugins:\n  disabled: [bad]  # broken for now\n");
  fs::create_symlink(target, t.config() / "config.yaml");
  PluginManager pm(t.options());
  auto r = pm.enable("bad");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the plugin stays disabled"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_symlink(t.config() / "config.yaml"));
  EXPECT_EQ(read(target), "plugins:\n  disabled: [bad]  # broken for now\n");
}

// git runs through bridge::process::run_process: its own process group and a timeout, so a clone
// that hangs (here a stand-in git that starts a child and sleeps) is stopped with all it started.
TEST(EnginePluginManager, GitThatHangsIsStoppedWithEverythingItStarted) {
  Tree t;
  fs::path pidfile = t.p("grandchild.pid");
  fs::path fake = t.write("bin/git", "#!/bin/sh\nsleep 30 &\necho $! > '" + pidfile.string() + "'\nsleep 30\n");
  fs::permissions(fake, fs::perms::owner_all);
  PluginManager pm(t.options(), GitOptions{fake.string(), std::chrono::milliseconds(300)});
  const auto started = std::chrono::steady_clock::now();
  auto r = pm.install("https://example.invalid/plugin.git", "", "");
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("git clone https://example.invalid/plugin.git failed: timed out after 300 ms"), std::string::npos)
      << r.err;
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_FALSE(fs::exists(t.config() / "plugins/plugin"));
  auto pid_text = read(pidfile);
  ASSERT_FALSE(pid_text.empty());
  const pid_t grandchild = static_cast<pid_t>(std::stol(pid_text));
  // The group was killed: the grandchild is gone (or a zombie of init's for a moment).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ::kill(grandchild, 0) != 0 || read("/proc/" + std::to_string(grandchild) + "/stat").find(" Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "the process git started survived the timeout";
}

TEST(EnginePluginManager, GitThatCannotStartSaysSo) {
  Tree t;
  PluginManager pm(t.options(), GitOptions{t.p("no-such-git").string(), std::chrono::seconds(5)});
  auto r = pm.install("https://example.invalid/plugin.git", "", "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("installing from git needs " + t.p("no-such-git").string() + ", which could not be started"),
            std::string::npos)
      << r.err;
}
