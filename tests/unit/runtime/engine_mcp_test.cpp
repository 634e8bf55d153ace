// mcp_servers/<id>.yaml: every field and validation rule of the seed; merging with plugins.
#include <gtest/gtest.h>

#include "engine_test_util.hpp"

using namespace runtime::engine;
using engine_test::contains;
using engine_test::join;
using engine_test::Tree;
using runtime::config::Diagnostics;

namespace {
const McpServerConfig* server(const Engine& e, const std::string& id) {
  for (const auto& s : e.mcp_servers())
    if (s.id == id) return &s;
  return nullptr;
}
}  // namespace

TEST(EngineMcp, SeedExamplesLoadWithDefaults) {
  Tree t;
  t.write("config/executors/devbox.yaml", "type: ssh\nhost: devbox\n");
  t.write("config/mcp_servers/serena.yaml",
          "id: serena\ntype: stdio\ncommand: uvx\nargs: [serena, start-mcp-server]\nexecutors: [local, devbox]\n"
          "required: true\nenv:\n  HOME_COPY: ${HOME}\n");
  t.write("config/mcp_servers/context7.yaml",
          "id: context7\ntype: http\nurl: https://mcp.context7.com/mcp\nheaders:\n  CONTEXT7_API_KEY: abc\n"
          "tools: [resolve-library-id]\nstartup_timeout_seconds: 0.5\ntool_timeout_seconds: 10\ndisabled: true\n");
  Diagnostics d;
  auto e = t.load(d);
  ASSERT_FALSE(runtime::config::has_errors(d)) << join(d);
  auto* s = server(*e, "serena");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->transport, McpServerConfig::Transport::Stdio);
  EXPECT_EQ(s->command, "uvx");
  EXPECT_EQ(s->args, (std::vector<std::string>{"serena", "start-mcp-server"}));
  EXPECT_EQ(s->executors, (std::vector<std::string>{"local", "devbox"}));
  EXPECT_TRUE(s->required);
  EXPECT_EQ(s->env.at("HOME_COPY"), "${HOME}");  // values are used as written
  EXPECT_EQ(s->startup_timeout_seconds, 30);
  EXPECT_EQ(s->tool_timeout_seconds, 300);
  EXPECT_EQ(s->source_file, t.config() / "mcp_servers/serena.yaml");
  auto* c = server(*e, "context7");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->transport, McpServerConfig::Transport::Http);
  EXPECT_EQ(c->headers.at("CONTEXT7_API_KEY"), "abc");
  EXPECT_EQ(*c->tools, (std::vector<std::string>{"resolve-library-id"}));
  EXPECT_EQ(c->startup_timeout_seconds, 0.5);
  EXPECT_TRUE(c->disabled);
  EXPECT_EQ(c->executors, (std::vector<std::string>{"local"}));
  // A disabled server is kept in the list but not given to sessions.
  auto v = e->session_view(t.project());
  ASSERT_EQ(v.mcp_servers.size(), 1u);
  EXPECT_EQ(v.mcp_servers[0].id, "serena");
}

TEST(EngineMcp, EveryRuleHasItsMessage) {
  Tree t;
  t.write("config/executors/vm.yaml", "type: virtual\n");
  t.write("config/mcp_servers/wrong-name.yaml", "id: other\ntype: stdio\ncommand: x\n");
  t.write("config/mcp_servers/a__b.yaml", "id: a__b\ntype: stdio\ncommand: x\n");
  t.write("config/mcp_servers/nocmd.yaml", "id: nocmd\ntype: stdio\nargs: [x]\n");
  t.write("config/mcp_servers/mixed.yaml", "id: mixed\ntype: stdio\ncommand: x\nurl: https://x\n");
  t.write("config/mcp_servers/httpcmd.yaml", "id: httpcmd\ntype: http\nurl: https://x\ncommand: x\n");
  t.write("config/mcp_servers/badurl.yaml", "id: badurl\ntype: sse\nurl: ftp://x\n");
  t.write("config/mcp_servers/ws.yaml", "id: ws\ntype: ws\nurl: https://x\n");
  t.write("config/mcp_servers/unknown.yaml", "id: unknown\ntype: stdio\ncommand: x\ntimeout: 3\n");
  t.write("config/mcp_servers/exec.yaml",
          "id: exec\ntype: stdio\ncommand: x\nexecutors:\n  - local\n  - openvaala\n  - vm\n  - nowhere\n");
  t.write("config/mcp_servers/times.yaml", "id: times\ntype: stdio\ncommand: x\ntool_timeout_seconds: 0\n");
  t.write("config/mcp_servers/noid.yaml", "type: stdio\ncommand: x\n");
  Diagnostics d;
  auto e = t.load(d);
  const std::string m = (t.config() / "mcp_servers").string() + "/";
  for (const auto& want : std::vector<std::string>{
           m + "wrong-name.yaml:1: id 'other' does not match the file name 'wrong-name.yaml'",
           m + "a__b.yaml:1: id 'a__b' is invalid: use letters, digits, '-' and '_', without '__'",
           m + "nocmd.yaml:1: 'command' is required for a stdio server",
           m + "mixed.yaml:4: 'url' is not allowed for a stdio server (only for http and sse)",
           m + "httpcmd.yaml:4: 'command' is not allowed for an http server (only for stdio)",
           m + "badurl.yaml:3: 'url' must be an http:// or https:// address, not 'ftp://x'",
           m + "ws.yaml:2: 'type' must be stdio, http or sse, not 'ws'",
           m + "unknown.yaml:4: unknown key 'timeout' in an MCP server file (allowed: id, type, command, args, env, "
               "url, headers, oauth, executors, tools, required, disabled, startup_timeout_seconds, tool_timeout_seconds)",
           m + "exec.yaml:6: the built-in 'openvaala' executor cannot run MCP servers (use local or an executor from "
               "executors/)",
           m + "exec.yaml:7: executor 'vm' is virtual and cannot run MCP servers",
           m + "exec.yaml:8: executor 'nowhere' is not defined (no executors/nowhere.yaml); each entry must be local "
               "or an executor from executors/",
           m + "times.yaml:4: 'tool_timeout_seconds' must be a positive number of seconds",
           m + "noid.yaml:1: 'id' is required and must match the file name",
       })
    EXPECT_TRUE(contains(d, want)) << "missing: " << want << "\n got:\n" << join(d);
  EXPECT_TRUE(e->mcp_servers().empty());  // every one of them is left out
  EXPECT_FALSE(e->failed());              // but the load as a whole works
}

TEST(EngineMcp, AgentSelectionAbsentAllEmptyNone) {
  Tree t;
  t.write("config/mcp_servers/one.yaml", "id: one\ntype: stdio\ncommand: x\n");
  t.write("config/mcp_servers/two.yaml", "id: two\ntype: stdio\ncommand: y\n");
  t.write("config/agents/all.yaml", "description: all\n");
  t.write("config/agents/none.yaml", "mcp_servers: []\n");
  t.write("config/agents/just-two.yaml", "mcp_servers: [two]\n");
  t.write("config/agents/ghost.yaml", "mcp_servers:\n  - ghost\n");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_EQ(e->session_view(t.project(), "all").mcp_servers.size(), 2u);
  EXPECT_EQ(e->session_view(t.project(), "none").mcp_servers.size(), 0u);
  auto v = e->session_view(t.project(), "just-two");
  ASSERT_EQ(v.mcp_servers.size(), 1u);
  EXPECT_EQ(v.mcp_servers[0].id, "two");
  EXPECT_TRUE(contains(d, (t.config() / "agents/ghost.yaml").string() +
                              ":1: mcp_servers names 'ghost', which is not a configured MCP server"))
      << join(d);
}

TEST(EngineMcp, PluginServersMergeUserFileWinsAndDuplicatesFail) {
  Tree t;
  t.write("config/plugins/alpha/.openvaala-plugin/plugin.yaml",
          "name: alpha\nmcp_servers:\n  - id: docs\n    type: stdio\n    command: node\n"
          "    args: [\"${OPENVAALA_PLUGIN_ROOT}/mcp/server.mjs\"]\n    env:\n      DIR: ${OPENVAALA_PLUGIN_ROOT}/d\n"
          "  - id: shared\n    type: stdio\n    command: a\n");
  t.write("config/plugins/beta/.openvaala-plugin/plugin.yaml",
          "name: beta\nmcp_servers:\n  - id: overridden\n    type: stdio\n    command: b\n");
  t.write("config/mcp_servers/overridden.yaml", "id: overridden\ntype: http\nurl: https://example.com/mcp\n");
  {
    Diagnostics d;
    auto e = t.load(d);
    ASSERT_FALSE(e->failed()) << join(d);
    auto* docs = server(*e, "docs");
    ASSERT_NE(docs, nullptr);
    const std::string root = (t.config() / "plugins/alpha").string();
    EXPECT_EQ(docs->args, (std::vector<std::string>{root + "/mcp/server.mjs"}));
    EXPECT_EQ(docs->env.at("DIR"), root + "/d");
    EXPECT_EQ(docs->env.at("OPENVAALA_PLUGIN_ROOT"), root);
    EXPECT_EQ(docs->plugin, "alpha");
    auto* ov = server(*e, "overridden");
    ASSERT_NE(ov, nullptr);
    EXPECT_EQ(ov->transport, McpServerConfig::Transport::Http);  // the file in mcp_servers/ wins
    EXPECT_TRUE(e->find_plugin("beta")->mcp_server_ids.empty());
  }
  // A second enabled plugin with the same id: the load fails.
  t.write("config/plugins/gamma/.openvaala-plugin/plugin.yaml",
          "name: gamma\nmcp_servers:\n  - id: shared\n    type: stdio\n    command: c\n");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_TRUE(e->failed());
  EXPECT_TRUE(contains(d, (t.config() / "plugins/gamma/.openvaala-plugin/plugin.yaml").string() +
                              ":3: MCP server id 'shared' is also declared by the enabled plugin 'alpha'; two enabled "
                              "plugins cannot declare the same id (disable one, or put a file shared.yaml in "
                              "mcp_servers/)"))
      << join(d);
}

TEST(EngineMcp, PluginEntriesCannotHaveExecutors) {
  Tree t;
  t.write("config/plugins/p/.openvaala-plugin/plugin.yaml",
          "name: p\nmcp_servers:\n  - id: s\n    type: stdio\n    command: x\n    executors: [local]\n");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_TRUE(e->failed());
  EXPECT_TRUE(contains(d, (t.config() / "plugins/p/.openvaala-plugin/plugin.yaml").string() +
                              ":6: 'executors' is not allowed in a plugin's mcp_servers: plugin servers run only on "
                              "local (to run it elsewhere, put a file with the same id in mcp_servers/)"))
      << join(d);
}
