// executors/<id>.yaml (DESIGN §10): every field, every rule with its path:line message, and who
// may name an executor (default_executor, an agent's executor:).
#include <gtest/gtest.h>

#include <algorithm>

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
          "ssh_options: [ProxyJump=bastion]\nworkdir: ~/src/app\nenv: {GOFLAGS: -mod=mod}\nhelper: false\n");
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
  EXPECT_FALSE(dev.helper) << "helper: false (the default is true)";
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
  t.write("config/executors/helper.yaml", "type: ssh\nhost: h\nhelper: sometimes\n");
  t.write("config/executors/vhelper.yaml", "type: virtual\nroot: /\nhelper: false\n");
  Diagnostics d;
  auto e = t.load(d);
  const std::string x = (t.config() / "executors").string() + "/";
  for (const auto& want : std::vector<std::string>{
           x + "wrong.yaml:1: id 'other' does not match the file name 'wrong.yaml'",
           x + "bad name.yaml: the executor id 'bad name' (the file name) is invalid: use letters, digits, - and _",
           x + "local.yaml: 'local' is a built-in executor and cannot be redefined (rename the file)",
           x + "notype.yaml: an executor file needs 'type' (ssh, container, devcontainer or virtual)",
           x + "docker.yaml:1: 'type' must be ssh, container, devcontainer or virtual, not 'docker' (local and openvaala are built in)",
           x + "nohost.yaml: an ssh executor needs 'host' (a host name or an alias from ~/.ssh/config)",
           x + "port.yaml:3: 'port' must be a port number (1-65535)",
           x + "opts.yaml:4: each ssh_options entry must be 'Option=value' (as ssh -o takes it), got 'ProxyJump'",
           x + "opts.yaml:5: 'ControlPath' is set by openvaala (BatchMode and one shared connection per executor)",
           x + "unknown.yaml:3: unknown key 'password' in an executor file (allowed: id, type, host, user, port, "
               "identity_file, ssh_options, workdir, env, root, read_only, engine, container, image, mounts, folder, helper)",
           x + "helper.yaml:3: 'helper' must be true or false",
           x + "vhelper.yaml:3: 'helper' is for executors that run commands, not virtual ones (they run nothing)",
           x + "mixed.yaml:3: 'root' is for virtual executors, not ssh",
           x + "vhost.yaml:3: 'host' is for executors that run commands, not virtual ones (they run nothing)",
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

TEST(EngineExecutors, AContainerExecutorExecsIntoARunningContainerOrStartsAnImage) {
  Tree t;
  t.write("home/src/app/readme", "x");
  t.write("config/executors/box.yaml",
          "type: container\nengine: docker\ncontainer: app-dev\nworkdir: /workspace\nuser: dev\nenv: {GOFLAGS: -mod=mod}\n");
  t.write("config/executors/img.yaml",
          "type: container\nimage: localhost/dev:1\nmounts: [\"~/src/app:/workspace\", \"/tmp:/scratch:ro\"]\nworkdir: /workspace\n");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_TRUE(d.empty()) << join(d);
  const auto& box = e->executors().at("box");
  EXPECT_EQ(box.type, ExecutorConfig::Type::Container);
  EXPECT_EQ(box.engine, "docker");
  EXPECT_EQ(box.container, "app-dev");
  EXPECT_TRUE(box.image.empty());
  EXPECT_EQ(box.user.value_or(""), "dev");
  EXPECT_EQ(box.workdir, "/workspace");
  ASSERT_EQ(box.env.size(), 1u);
  const auto& img = e->executors().at("img");
  EXPECT_EQ(img.engine, "") << "no engine: podman when found, else docker, chosen when it runs";
  EXPECT_EQ(img.image, "localhost/dev:1");
  EXPECT_EQ(img.mount_args, (std::vector<std::string>{"-v", (t.home() / "src/app").string() + ":/workspace", "-v", "/tmp:/scratch:ro"}))
      << "mounts become the engine's -v, ~ being the local home";
}

TEST(EngineExecutors, EveryContainerRuleHasItsMessage) {
  Tree t;
  t.write("config/executors/neither.yaml", "type: container\n");
  t.write("config/executors/both.yaml", "type: container\ncontainer: a\nimage: b\n");
  t.write("config/executors/engine.yaml", "type: container\ncontainer: a\nengine: lxc\n");
  t.write("config/executors/flag.yaml", "type: container\ncontainer: --privileged\n");
  t.write("config/executors/mounts.yaml", "type: container\ncontainer: a\nmounts: [\"/a:/b\"]\n");
  t.write("config/executors/badmount.yaml", "type: container\nimage: i\nmounts: [\"relative:/b\", \"/a:b\"]\n");
  t.write("config/executors/sshkeys.yaml", "type: container\ncontainer: a\nhost: h\n");
  t.write("config/executors/sshimage.yaml", "type: ssh\nhost: h\nimage: i\n");
  Diagnostics d;
  auto e = t.load(d);
  const std::string x = (t.config() / "executors").string() + "/";
  for (const auto& want : std::vector<std::string>{
           x + "neither.yaml: a container executor needs 'container' (a running container's name) or 'image' (to start one from)",
           x + "both.yaml:3: a container executor takes 'container' (a running one) or 'image' (one started for it), not both",
           x + "engine.yaml:3: 'engine' must be podman or docker, not 'lxc'",
           x + "flag.yaml:2: 'container' must be a container's name or id",
           x + "mounts.yaml:3: 'mounts' is for image mode: a running container has its own",
           x + "badmount.yaml:3: the host side of mount 'relative:/b' must be absolute or start with ~/",
           x + "badmount.yaml:3: each mount must be 'host-path:container-path' (the container path absolute), got '/a:b'",
           x + "sshkeys.yaml:3: 'host' is not a container executor's (container, image, mounts, workdir, user, env)",
           x + "sshimage.yaml:3: 'image' is for container executors, not ssh",
       })
    EXPECT_TRUE(contains(d, want)) << "missing: " << want << "\n got:\n" << join(d);
  EXPECT_TRUE(e->executors().empty()) << "a broken executor file is left out";
}

TEST(EngineExecutors, ADevcontainerExecutorReadsTheFoldersDefinition) {
  Tree t;
  t.write("home/src/app/.devcontainer/devcontainer.json", R"({
    // as VS Code writes it: comments and trailing commas
    "name": "app",
    "image": "localhost/dev:1",
    "workspaceFolder": "/work/${localWorkspaceFolderBasename}",
    "remoteUser": "dev",
    "containerEnv": {"APP_HOME": "${containerWorkspaceFolder}", "FROM_HOST": "${localEnv:OPENVAALA_TEST_UNSET:fallback}"},
    "mounts": ["source=/tmp,target=/scratch,type=bind", {"source": "cache", "target": "/cache", "type": "volume"},],
  })");
  t.write("config/executors/dev.yaml", "type: devcontainer\nfolder: ~/src/app\nenv: {EXTRA: x}\n");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_TRUE(d.empty()) << join(d);
  const auto& dev = e->executors().at("dev");
  const std::string folder = (t.home() / "src/app").string();
  EXPECT_EQ(dev.type, ExecutorConfig::Type::Devcontainer);
  EXPECT_EQ(dev.image, "localhost/dev:1");
  EXPECT_EQ(dev.workdir, "/work/app") << "workspaceFolder, its variables replaced";
  EXPECT_EQ(dev.user.value_or(""), "dev") << "remoteUser";
  EXPECT_EQ(dev.mount_args, (std::vector<std::string>{"--mount", "type=bind,source=" + folder + ",target=/work/app", "--mount",
                                                      "source=/tmp,target=/scratch,type=bind", "--mount",
                                                      "type=volume,source=cache,target=/cache"}))
      << "the default workspaceMount (the folder at workspaceFolder), then mounts in both forms";
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(dev.env, (Env{{"APP_HOME", "/work/app"}, {"FROM_HOST", "fallback"}, {"EXTRA", "x"}}))
      << "containerEnv, then the file's env";
}

TEST(EngineExecutors, ADevcontainerThatNeedsABuilderOrIsBrokenSaysWhereAndWhy) {
  Tree t;
  t.write("home/built/.devcontainer/devcontainer.json", "{\n  \"name\": \"x\",\n  \"build\": {\"dockerfile\": \"Dockerfile\"}\n}\n");
  t.write("home/broken/.devcontainer/devcontainer.json", "{\n  \"image\": \"i\"\n  \"remoteUser\": \"dev\"\n}\n");
  t.write("home/vars/.devcontainer.json", "{\"image\": \"i\",\n \"workspaceFolder\": \"/w/${devcontainerId}\"}\n");
  t.write("home/empty/readme", "x");
  t.write("config/executors/built.yaml", "type: devcontainer\nfolder: ~/built\n");
  t.write("config/executors/broken.yaml", "type: devcontainer\nfolder: ~/broken\n");
  t.write("config/executors/vars.yaml", "type: devcontainer\nfolder: ~/vars\n");
  t.write("config/executors/empty.yaml", "type: devcontainer\nfolder: ~/empty\n");
  t.write("config/executors/nofolder.yaml", "type: devcontainer\nimage: i\n");
  Diagnostics d;
  auto e = t.load(d);
  const std::string x = (t.config() / "executors").string() + "/";
  const std::string h = t.home().string() + "/";
  for (const auto& want : std::vector<std::string>{
           h + "built/.devcontainer/devcontainer.json:3: 'build' needs a builder openvaala does not run: build the image, "
               "then name it in 'image'",
           h + "broken/.devcontainer/devcontainer.json:3: not valid JSON",
           h + "vars/.devcontainer.json:2: the variable ${devcontainerId} is not one openvaala knows",
           x + "empty.yaml:2: 'folder' " + h + "empty has no .devcontainer/devcontainer.json",
           x + "nofolder.yaml: a devcontainer executor needs 'folder' (the project folder with .devcontainer/devcontainer.json)",
           x + "nofolder.yaml:2: 'image' comes from devcontainer.json (a devcontainer executor takes folder, engine, env)",
       })
    EXPECT_TRUE(std::any_of(d.begin(), d.end(), [&](const auto& g) { return g.to_string().rfind(want, 0) == 0; }))
        << "missing: " << want << "\n got:\n" << join(d);
  EXPECT_TRUE(e->executors().empty()) << "a broken executor file is left out";
}
