// executors/<id>.yaml (DESIGN §10): every field, every rule with its path:line message, and who
// may name an executor (default_executor, an agent's executor:).
#include <gtest/gtest.h>

#include "engine_test_util.hpp"

using namespace runtime::engine;
using engine_test::contains;
using engine_test::join;
using engine_test::Tree;
using runtime::config::Diagnostics;
using runtime::config::ExecutorConfig;

TEST(EngineExecutors, EveryFieldOfTheDesignLoads) {
  Tree t;
  t.write("home/notes/design/readme.md", "x");
  t.write("config/executors/devbox.yaml",
          "id: devbox\ntype: ssh\nhost: devbox\nuser: me\nport: 2222\nidentity_file: ~/.ssh/id_ed25519\n"
          "ssh_options: [ProxyJump=bastion]\nworkdir: ~/src/app\nenv: {GOFLAGS: -mod=mod}\n");
  t.write("config/executors/docs.yaml", "id: docs\ntype: virtual\nroot: ~/notes/design\nread_only: true\n");
  t.write("config/config.yaml", "default_executor: devbox\n");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_TRUE(d.empty()) << join(d);
  ASSERT_EQ(e->executors().size(), 2u);
  const auto& dev = e->executors().at("devbox");
  EXPECT_EQ(dev.type, ExecutorConfig::Type::Ssh);
  EXPECT_EQ(dev.host, "devbox");
  EXPECT_EQ(dev.user.value_or(""), "me");
  EXPECT_EQ(dev.port.value_or(0), 2222);
  EXPECT_EQ(dev.identity_file.value_or(""), t.home() / ".ssh/id_ed25519");  // ~ is the local home
  EXPECT_EQ(dev.ssh_options, std::vector<std::string>{"ProxyJump=bastion"});
  EXPECT_EQ(dev.workdir, "~/src/app");  // expanded on the remote side, not here
  ASSERT_EQ(dev.env.size(), 1u);
  EXPECT_EQ(dev.env[0].first, "GOFLAGS");
  EXPECT_EQ(dev.env[0].second, "-mod=mod");
  const auto& docs = e->executors().at("docs");
  EXPECT_EQ(docs.type, ExecutorConfig::Type::Virtual);
  EXPECT_EQ(docs.root, t.home() / "notes/design");
  EXPECT_TRUE(docs.read_only);
  EXPECT_EQ(e->default_executor(*e->find_agent("default")), "devbox");
}

TEST(EngineExecutors, EveryRuleHasItsMessage) {
  Tree t;
  t.write("config/executors/wrong.yaml", "id: other\ntype: ssh\nhost: h\n");
  t.write("config/executors/bad name.yaml", "type: ssh\nhost: h\n");
  t.write("config/executors/local.yaml", "type: ssh\nhost: h\n");
  t.write("config/executors/notype.yaml", "host: h\n");
  t.write("config/executors/docker.yaml", "type: docker\n");
  t.write("config/executors/nohost.yaml", "type: ssh\nuser: me\n");
  t.write("config/executors/port.yaml", "type: ssh\nhost: h\nport: 70000\n");
  t.write("config/executors/opts.yaml", "type: ssh\nhost: h\nssh_options:\n  - ProxyJump\n  - ControlPath=/tmp/x\n");
  t.write("config/executors/unknown.yaml", "type: ssh\nhost: h\npassword: hunter2\n");
  t.write("config/executors/mixed.yaml", "type: ssh\nhost: h\nroot: /tmp\n");
  t.write("config/executors/vhost.yaml", "type: virtual\nroot: /\nhost: h\n");
  t.write("config/executors/noroot.yaml", "type: virtual\n");
  t.write("config/executors/missing.yaml", "type: virtual\nroot: /does/not/exist\n");
  t.write("config/executors/env.yaml", "type: ssh\nhost: h\nenv:\n  1BAD: x\n");
  t.write("config/executors/dash.yaml", "type: ssh\nhost: -oProxyCommand=x\n");
  Diagnostics d;
  auto e = t.load(d);
  const std::string x = (t.config() / "executors").string() + "/";
  for (const auto& want : std::vector<std::string>{
           x + "wrong.yaml:1: id 'other' does not match the file name 'wrong.yaml'",
           x + "bad name.yaml: the executor id 'bad name' (the file name) is invalid: use letters, digits, - and _",
           x + "local.yaml: 'local' is a built-in executor and cannot be redefined (rename the file)",
           x + "notype.yaml: an executor file needs 'type' (ssh or virtual)",
           x + "docker.yaml:1: 'type' must be ssh or virtual, not 'docker' (local and openvaala are built in)",
           x + "nohost.yaml: an ssh executor needs 'host' (a host name or an alias from ~/.ssh/config)",
           x + "port.yaml:3: 'port' must be a port number (1-65535)",
           x + "opts.yaml:4: each ssh_options entry must be 'Option=value' (as ssh -o takes it), got 'ProxyJump'",
           x + "opts.yaml:5: 'ControlPath' is set by openvaala (BatchMode and one shared connection per executor)",
           x + "unknown.yaml:3: unknown key 'password' in an executor file (allowed: id, type, host, user, port, "
               "identity_file, ssh_options, workdir, env, root, read_only)",
           x + "mixed.yaml:3: 'root' is for virtual executors, not ssh",
           x + "vhost.yaml:3: 'host' is for ssh executors, not virtual ones (they run nothing)",
           x + "noroot.yaml: a virtual executor needs 'root' (a local folder, seen as / on it)",
           x + "missing.yaml:2: 'root' /does/not/exist is not a folder",
           x + "env.yaml:4: 'env' key '1BAD' is not a variable name",
           x + "dash.yaml:2: 'host' must not start with '-'",
       })
    EXPECT_TRUE(contains(d, want)) << "missing: " << want << "\n got:\n" << join(d);
  EXPECT_TRUE(e->executors().empty()) << "a broken executor file is left out";
  EXPECT_FALSE(e->failed());
}

TEST(EngineExecutors, WhoNamesAnExecutorMustNameOneThatExists) {
  Tree t;
  t.write("config/config.yaml", "default_executor: nowhere\n");
  t.write("config/agents/remote.yaml", "description: r\nexecutor: gone\n");
  t.write("config/agents/docs.yaml", "description: d\nexecutor: openvaala\n");
  Diagnostics d;
  auto e = t.load(d);
  const std::string cfg = (t.config() / "config.yaml").string();
  const std::string agent = (t.config() / "agents/remote.yaml").string();
  EXPECT_TRUE(contains(d, cfg + ":1: default_executor 'nowhere' is not an executor (available: local, openvaala)")) << join(d);
  EXPECT_TRUE(contains(d, agent + ":2: executor 'gone' is not an executor (available: local, openvaala)")) << join(d);
  // The order of DESIGN §10: the agent's, else default_executor, else local.
  EXPECT_EQ(e->default_executor(*e->find_agent("docs")), "openvaala");
  EXPECT_EQ(e->default_executor(*e->find_agent("remote")), "local");
}
