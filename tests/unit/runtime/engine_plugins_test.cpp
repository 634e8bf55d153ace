// Plugins: native manifests, Codex/Claude manifests, Agent Plugins 1.0 (the OpenViking package and
// its mutations).
#include <gtest/gtest.h>

#include <fstream>

#include "engine_test_util.hpp"

using namespace runtime::engine;
using engine_test::contains;
using engine_test::join;
using engine_test::Tree;
using runtime::config::Diagnostic;
using runtime::config::Diagnostics;

namespace {

const McpServerConfig* server(const Engine& e, const std::string& id) {
  for (const auto& s : e.mcp_servers())
    if (s.id == id) return &s;
  return nullptr;
}

bool has_skill(const Engine& e, const fs::path& cwd, const std::string& name) {
  return e.session_view(cwd).find_skill(name) != nullptr;
}

// Copies the OpenViking-shaped fixture into config/plugins/<dir>.
fs::path install_openviking(const Tree& t, const std::string& dir = "openviking") {
  fs::path to = t.config() / "plugins" / dir;
  fs::create_directories(to.parent_path());
  fs::copy(fs::path(OPENVAALA_FIXTURES_DIR) / "engine/openviking", to, fs::copy_options::recursive);
  return to;
}

void replace_in(const fs::path& f, const std::string& from, const std::string& to) {
  std::ifstream in(f);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  auto pos = s.find(from);
  ASSERT_NE(pos, std::string::npos) << from;
  s.replace(pos, from.size(), to);
  std::ofstream(f, std::ios::trunc) << s;
}

}  // namespace

// ---- native manifests

TEST(EnginePlugins, NativeManifestSkillsHooksAndInfo) {
  Tree t;
  t.write("config/plugins/review/.openvaala-plugin/plugin.yaml",
          "name: review\nversion: 1.2.0\ndescription: Code review helpers\nskills: ./skills/\nhooks:\n"
          "  SessionStart:\n    - hooks:\n        - type: command\n          script: ./hooks/inject\n"
          "          args: [SessionStart]\n");
  t.write("config/plugins/review/hooks/inject", "#!/bin/sh\necho hi\n");
  fs::permissions(t.config() / "plugins/review/hooks/inject", fs::perms::owner_all);
  t.skill("config/plugins/review/skills/checklist", "checklist", "Use for review checklists.");
  t.write("config/plugins/review/skills/broken/SKILL.md", "---\nname: broken\n---\n");
  Diagnostics d;
  auto e = t.load(d);
  ASSERT_FALSE(e->failed()) << join(d);
  const PluginInfo* p = e->find_plugin("review");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->version, "1.2.0");
  EXPECT_EQ(p->description, "Code review helpers");
  EXPECT_EQ(p->format, PluginInfo::Format::OpenVaala);
  EXPECT_TRUE(p->enabled);
  EXPECT_EQ(p->skill_names, (std::vector<std::string>{"review:checklist"}));
  EXPECT_TRUE(has_skill(*e, t.project(), "review:checklist"));
  ASSERT_EQ(e->plugin_hook_sources().size(), 1u);
  EXPECT_EQ(e->plugin_hook_sources()[0].plugin_name, "review");
  EXPECT_EQ(e->plugin_hook_sources()[0].plugin_root, t.config() / "plugins/review");
  EXPECT_TRUE(e->plugin_hook_sources()[0].hooks["SessionStart"]);
  // The malformed plugin skill is skipped with a warning.
  bool warned = false;
  for (const auto& x : d)
    warned = warned || (x.severity == Diagnostic::Severity::Warning &&
                        x.path == (t.config() / "plugins/review/skills/broken/SKILL.md").string());
  EXPECT_TRUE(warned) << join(d);
}

TEST(EnginePlugins, BrokenNativeManifestFailsTheLoad) {
  struct Case {
    std::string dir, manifest, message;
  };
  const std::vector<Case> cases = {
      {"rev", "name: review\n", ":1: name 'review' must match the plugin's folder name 'rev'"},
      {"skill", "name: skill\n", ":1: 'skill' is a reserved name (it would clash with /skill:<name>)"},
      {"bad", "name: Bad_Name\n", ":1: name 'Bad_Name' is invalid: use lowercase letters, digits and single hyphens"},
      {"extra", "name: extra\ncommands: x\n",
       ":2: unknown key 'commands' in plugin.yaml (allowed: name, version, description, skills, hooks, mcp_servers)"},
      {"noname", "version: 1.0.0\n", ":1: 'name' is required and must be the plugin's folder name ('noname')"},
      {"yaml", "name: [unclosed\n", ":2: invalid YAML: end of sequence flow not found"},
      {"abs", "name: abs\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: /usr/bin/true\n",
       ":6: script '/usr/bin/true' must be a relative path inside the plugin (like ./hooks/check.sh), not an absolute "
       "or ~/ path"},
      {"esc", "name: esc\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: ../other/x.sh\n",
       ":6: script '../other/x.sh' points outside the plugin folder"},
      {"skdir", "name: skdir\nskills: ../elsewhere\n",
       ":2: skills '../elsewhere' must be a relative path inside the plugin folder"},
  };
  for (const auto& c : cases) {
    Tree t;
    fs::path m = t.write("config/plugins/" + c.dir + "/.openvaala-plugin/plugin.yaml", c.manifest);
    Diagnostics d;
    auto e = t.load(d);
    EXPECT_TRUE(e->failed()) << c.dir;
    EXPECT_TRUE(contains(d, m.string() + c.message)) << c.dir << ": want " << m.string() + c.message << "\n"
                                                      << join(d);
  }
}

TEST(EnginePlugins, SkippedFoldersAndDisabledPlugins) {
  Tree t;
  fs::create_directories(t.config() / "plugins/no-manifest/skills/x");
  t.skill("config/plugins/no-manifest/skills/x", "x", "never loaded");
  t.write("config/plugins/.hidden/.openvaala-plugin/plugin.yaml", "name: broken: yes\n");
  t.write("config/plugins/broken/.openvaala-plugin/plugin.yaml", "name: [\n");
  t.skill("config/plugins/broken/skills/s", "s", "x");
  {
    Diagnostics d;
    EXPECT_TRUE(t.load(d)->failed());
  }
  // A broken plugin can be disabled: then the load works and it is listed as disabled.
  t.write("config/config.yaml", "plugins:\n  disabled: [broken, ghost]\n");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_FALSE(e->failed()) << join(d);
  ASSERT_EQ(e->plugins().size(), 1u);
  EXPECT_EQ(e->plugins()[0].name, "broken");
  EXPECT_FALSE(e->plugins()[0].enabled);
  EXPECT_FALSE(has_skill(*e, t.project(), "broken:s"));
  EXPECT_FALSE(has_skill(*e, t.project(), "no-manifest:x"));
  EXPECT_TRUE(contains(d, (t.config() / "config.yaml").string() +
                              ":1: warning: plugins.disabled names 'ghost', which is not an installed plugin"))
      << join(d);
}

TEST(EnginePlugins, CodexAndClaudeManifests) {
  Tree t;
  t.write("config/plugins/cx/.codex-plugin/plugin.json",
          R"({"name": "cx", "version": "0.3.0", "description": "codex one", "skills": ["./extra", "./one", "../x"],
              "hooks": "ignored", "mcpServers": {"s": {}}})");
  t.skill("config/plugins/cx/skills/a", "a", "default dir");
  t.skill("config/plugins/cx/extra/group/b", "b", "in a collection");
  t.skill("config/plugins/cx/one", "single", "one skill folder");
  t.write("config/plugins/cl/.claude-plugin/plugin.json", R"({"name": "", "skills": "./more"})");
  t.skill("config/plugins/cl/more/c", "c", "claude extra");
  // Several manifests: OpenVaala, then Codex, then Claude.
  t.write("config/plugins/both/.claude-plugin/plugin.json", R"({"name": "both", "version": "9.9.9"})");
  t.write("config/plugins/both/.codex-plugin/plugin.json", R"({"name": "both", "version": "1.0.0"})");
  t.write("config/plugins/badjson/.claude-plugin/plugin.json", "{\n  \"name\": \"badjson\",\n  oops\n}");
  Diagnostics d;
  auto e = t.load(d);
  const std::string bad = (t.config() / "plugins/badjson/.claude-plugin/plugin.json").string();
  bool bad_reported = false;
  for (const auto& x : d) bad_reported = bad_reported || (x.path == bad && x.line == 3);
  EXPECT_TRUE(bad_reported) << join(d);
  EXPECT_TRUE(e->failed());
  fs::remove_all(t.config() / "plugins/badjson");
  d.clear();
  e = t.load(d);
  ASSERT_FALSE(e->failed()) << join(d);
  EXPECT_EQ(e->find_plugin("cx")->skill_names, (std::vector<std::string>{"cx:a", "cx:b", "cx:single"}));
  EXPECT_TRUE(e->find_plugin("cx")->mcp_server_ids.empty());  // Codex MCP servers are not loaded
  EXPECT_TRUE(e->plugin_hook_sources().empty());
  EXPECT_TRUE(contains(d, (t.config() / "plugins/cx/.codex-plugin/plugin.json").string() +
                              ":1: warning: skills path '../x' is outside the plugin folder; ignored"))
      << join(d);
  EXPECT_EQ(e->find_plugin("cl")->skill_names, (std::vector<std::string>{"cl:c"}));  // empty name: the folder's
  EXPECT_EQ(e->find_plugin("both")->version, "1.0.0");
  EXPECT_EQ(e->find_plugin("both")->format, PluginInfo::Format::Codex);
}

// Promise: a plugin can be disabled by the name it declares (the name `openvaala plugin list` shows
// and its skills carry), also when its folder is named otherwise.
TEST(EnginePlugins, AVendorPluginIsDisabledByTheNameItDeclares) {
  Tree t;
  t.write("config/plugins/tools-1.2/.claude-plugin/plugin.json", R"({"name": "tools"})");
  t.skill("config/plugins/tools-1.2/skills/fmt", "fmt", "formats");
  {
    Diagnostics d;
    auto e = t.load(d);
    ASSERT_FALSE(e->failed()) << join(d);
    ASSERT_TRUE(has_skill(*e, t.project(), "tools:fmt")) << "set-up: the plugin's skill is offered";
  }
  t.write("config/config.yaml", "plugins:\n  disabled: [tools]\n");
  Diagnostics d;
  auto e = t.load(d);
  ASSERT_FALSE(e->failed()) << join(d);
  EXPECT_FALSE(has_skill(*e, t.project(), "tools:fmt"))
      << "plugins.disabled: [tools] must disable the plugin that declares the name tools (folder tools-1.2)";
}

// ---- Agent Plugins 1.0

TEST(EnginePlugins, OpenVikingAgentPluginPasses) {
  Tree t;
  fs::path root = install_openviking(t);
  Diagnostics d;
  auto e = t.load(d);
  ASSERT_FALSE(e->failed()) << join(d);
  EXPECT_TRUE(d.empty()) << join(d);
  const PluginInfo* p = e->find_plugin("openviking");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->format, PluginInfo::Format::AgentPlugins);
  EXPECT_EQ(p->version, "0.1.0");
  EXPECT_EQ(p->skill_names, (std::vector<std::string>{"openviking:openviking-memory"}));
  auto* s = server(*e, "openviking");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->transport, McpServerConfig::Transport::Stdio);
  EXPECT_EQ(s->command, "node");
  EXPECT_EQ(s->args, (std::vector<std::string>{(root / "servers/mcp-proxy.mjs").string()}));
  EXPECT_EQ(s->env.at("PLUGIN_ROOT"), root.string());
  EXPECT_EQ(s->env.at("PLUGIN_DATA"), (t.root() / "data/plugin-data/openviking").string());
  EXPECT_EQ(*s->cwd, root);
  EXPECT_EQ(s->plugin, "openviking");
  auto v = e->session_view(t.project());
  ASSERT_NE(v.find_skill("openviking:openviking-memory"), nullptr);
  EXPECT_EQ(expand_slash_command(v, "/openviking:openviking-memory recall the build steps").kind,
            SlashExpansion::Kind::Expanded);
}

TEST(EnginePlugins, AgentPluginManifestMutationsFail) {
  struct Case {
    std::string name, from, to, message;
  };
  const std::vector<Case> cases = {
      {"bad name", "\"name\": \"openviking\"", "\"name\": \"Open--Viking\"",
       ":3: name 'Open--Viking' is invalid: 1-64 lowercase letters, digits, '-' and '.', starting and ending with a "
       "letter or digit, without '--', '..', '-.' or '.-'"},
      {"extra root field", "\"license\": \"AGPL-3.0\",", "\"license\": \"AGPL-3.0\",\n  \"hooks\": {},",
       ":13: unknown field 'hooks' in plugin.json (allowed: $schema, name, version, description, author, homepage, "
       "repository, license, keywords, extensions)"},
      {"schema version", "1.0.0/plugin.schema.json", "2.0.0/plugin.schema.json",
       ":2: '$schema' must be https://agent-plugins.org/schemas/1.0.0/plugin.schema.json (Agent Plugins 1.0; other "
       "versions are not supported)"},
      {"semver", "\"version\": \"0.1.0\"", "\"version\": \"banana\"",
       ":4: version 'banana' is not a semantic version (like 1.2.0)"},
      {"author field", "\"name\": \"OpenViking\",", "\"name\": \"OpenViking\", \"twitter\": \"@ov\",",
       ":7: unknown field 'twitter' in 'author' (allowed: name, email, url)"},
      {"keywords type", "\"keywords\": [\"memory\", \"context\", \"mcp\", \"openviking\"]", "\"keywords\": \"memory\"",
       ":13: 'keywords' must be an array of strings"},
  };
  for (const auto& c : cases) {
    Tree t;
    fs::path root = install_openviking(t);
    replace_in(root / "plugin.json", c.from, c.to);
    Diagnostics d;
    auto e = t.load(d);
    EXPECT_TRUE(e->failed()) << c.name;
    EXPECT_TRUE(contains(d, (root / "plugin.json").string() + c.message))
        << c.name << ": want " << (root / "plugin.json").string() + c.message << "\n" << join(d);
  }
}

TEST(EnginePlugins, AgentPluginMcpMutationsSkipTheServer) {
  struct Case {
    std::string name, from, to, message;
  };
  const std::string args = "\"args\": [\"${PLUGIN_ROOT}/servers/mcp-proxy.mjs\"]";
  const std::string stdio =
      "\"type\": \"stdio\",\n      \"command\": \"node\",\n      \"args\": [\"${PLUGIN_ROOT}/servers/mcp-proxy.mjs\"]";
  const std::vector<Case> cases = {
      {"escaping arg", args, "\"args\": [\"${PLUGIN_ROOT}/../escape.mjs\"]",
       ":4: MCP server 'openviking': argument '${PLUGIN_ROOT}/../escape.mjs' resolves outside the plugin folder "
       "(server skipped)"},
      {"missing arg file", args, "\"args\": [\"${PLUGIN_ROOT}/servers/missing.mjs\"]",
       ":4: MCP server 'openviking': argument '${PLUGIN_ROOT}/servers/missing.mjs' names a file that does not exist in "
       "the plugin (server skipped)"},
      {"command with spaces", "\"command\": \"node\"", "\"command\": \"npx -y foo\"",
       ":4: MCP server 'openviking': 'command' must be a single executable token, not 'npx -y foo' (put arguments in "
       "args) (server skipped)"},
      {"command placeholder", "\"command\": \"node\"", "\"command\": \"${PLUGIN_ROOT}/bin/x\"",
       ":4: MCP server 'openviking': 'command' must not contain placeholders such as ${PLUGIN_ROOT} (put them in args) "
       "(server skipped)"},
      {"escaping command", "\"command\": \"node\"", "\"command\": \"./../x\"",
       ":4: MCP server 'openviking': 'command' './../x' points outside the plugin folder (server skipped)"},
      {"escaping cwd", args, args + ", \"cwd\": \"${PLUGIN_DATA}/../..\"",
       ":4: MCP server 'openviking': 'cwd' '${PLUGIN_DATA}/../..' resolves outside the plugin data folder (server "
       "skipped)"},
      {"reserved env", args, args + ", \"env\": {\"PLUGIN_ROOT\": \"x\"}",
       ":4: MCP server 'openviking': 'env' must not set PLUGIN_ROOT (the client sets it) (server skipped)"},
      {"unknown server field", args, args + ", \"timeout\": 5",
       ":4: MCP server 'openviking': unknown field 'timeout' for a stdio server (allowed: type, command, args, env, "
       "cwd) (server skipped)"},
      {"credentials in headers", stdio,
       "\"type\": \"streamable-http\", \"url\": \"https://ov.example.com/mcp\", \"headers\": {\"Authorization\": "
       "\"Bearer x\"}",
       ":4: MCP server 'openviking': header 'Authorization' looks like a credential: static headers in mcp.json must "
       "not carry secrets (use a stdio proxy that reads them at run time) (server skipped)"},
      {"api key header", stdio,
       "\"type\": \"streamable-http\", \"url\": \"https://ov.example.com/mcp\", \"headers\": {\"X-Api-Key\": \"x\"}",
       ":4: MCP server 'openviking': header 'X-Api-Key' looks like a credential: static headers in mcp.json must not "
       "carry secrets (use a stdio proxy that reads them at run time) (server skipped)"},
      {"plain http", stdio, "\"type\": \"streamable-http\", \"url\": \"http://example.com/mcp\"",
       ":4: MCP server 'openviking': 'url' must use https:// (plain http:// is allowed only for localhost and loopback "
       "addresses) (server skipped)"},
      {"url fragment", stdio, "\"type\": \"streamable-http\", \"url\": \"https://example.com/mcp#x\"",
       ":4: MCP server 'openviking': 'url' must not have a fragment (#...) (server skipped)"},
      {"duplicate headers", stdio,
       "\"type\": \"streamable-http\", \"url\": \"https://example.com/mcp\", \"headers\": {\"X-A\": \"1\", \"x-a\": "
       "\"2\"}",
       ":4: MCP server 'openviking': header 'x-a' is given twice (header names ignore case) (server skipped)"},
      {"mcp schema", "1.0.0/mcp.schema.json", "2.0.0/mcp.schema.json",
       ":2: '$schema' must be https://agent-plugins.org/schemas/1.0.0/mcp.schema.json (Agent Plugins 1.0); MCP "
       "servers disabled for this plugin"},
  };
  for (const auto& c : cases) {
    Tree t;
    fs::path root = install_openviking(t);
    replace_in(root / "mcp.json", c.from, c.to);
    Diagnostics d;
    auto e = t.load(d);
    EXPECT_FALSE(e->failed()) << c.name << "\n" << join(d);  // the narrowest failure: only the server
    EXPECT_EQ(server(*e, "openviking"), nullptr) << c.name;
    EXPECT_TRUE(has_skill(*e, t.project(), "openviking:openviking-memory")) << c.name;  // skills still load
    EXPECT_TRUE(contains(d, (root / "mcp.json").string() + c.message))
        << c.name << ": want " << (root / "mcp.json").string() + c.message << "\n" << join(d);
  }
}

TEST(EnginePlugins, AgentPluginLoopbackHttpAndPlaceholders) {
  Tree t;
  fs::path root = install_openviking(t);
  std::ofstream(root / "mcp.json", std::ios::trunc) << R"({
  "$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json",
  "mcpServers": {
    "local-http": {"type": "streamable-http", "url": "http://127.0.0.1:1933/mcp", "headers": {"X-Tenant": "${TOKEN}"}},
    "expand": {"type": "stdio", "command": "node",
               "args": ["${PLUGIN_ROOT}/servers/mcp-proxy.mjs", "${PLUGIN_DATA}/d", "${HOME}", "x${PLUGIN_ROOT}${PLUGIN_ROOT}"],
               "env": {"A": "${PLUGIN_DATA}/a"}, "cwd": "./servers"}
  }
})";
  Diagnostics d;
  auto e = t.load(d);
  ASSERT_TRUE(d.empty()) << join(d);
  auto* h = server(*e, "local-http");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->headers.at("X-Tenant"), "${TOKEN}");  // no expansion in headers
  auto* x = server(*e, "expand");
  ASSERT_NE(x, nullptr);
  const std::string data = (t.root() / "data/plugin-data/openviking").string();
  EXPECT_EQ(x->args, (std::vector<std::string>{(root / "servers/mcp-proxy.mjs").string(), data + "/d", "${HOME}",
                                               "x" + root.string() + root.string()}));
  EXPECT_EQ(x->env.at("A"), data + "/a");
  EXPECT_EQ(*x->cwd, root / "servers");
}

TEST(EnginePlugins, AgentPluginSkillsImmediateChildrenOnly) {
  Tree t;
  fs::path root = install_openviking(t);
  t.skill("config/plugins/openviking/skills/group/nested", "nested", "not an immediate child");
  t.skill("config/plugins/openviking/skills/wrong-dir", "other-name", "name differs from the folder");
  Diagnostics d;
  auto e = t.load(d);
  EXPECT_FALSE(e->failed());
  EXPECT_EQ(e->find_plugin("openviking")->skill_names, (std::vector<std::string>{"openviking:openviking-memory"}));
  EXPECT_TRUE(contains(d, (root / "skills/wrong-dir/SKILL.md").string() +
                              ": warning: name 'other-name' must match the skill's folder name 'wrong-dir' (skill "
                              "skipped)"))
      << join(d);
}

TEST(EnginePlugins, PluginHookProblemsAreManifestProblems) {
  {
    // Found by the hook loader (the script must exist): still a broken manifest.
    Tree t;
    fs::path m = t.write("config/plugins/hk/.openvaala-plugin/plugin.yaml",
                         "name: hk\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: ./missing.sh\n");
    Diagnostics d;
    auto e = t.load(d);
    EXPECT_TRUE(e->failed());
    EXPECT_FALSE(e->find_plugin("hk")->valid);
    int at6 = 0;
    for (const auto& x : d) at6 += x.path == m.string() && x.line == 6;
    EXPECT_EQ(at6, 1) << join(d);
  }
  {
    // Found by the plugin loader: reported once.
    Tree t;
    fs::path m = t.write("config/plugins/hk/.openvaala-plugin/plugin.yaml",
                         "name: hk\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: /bin/true\n");
    Diagnostics d;
    auto e = t.load(d);
    EXPECT_TRUE(e->failed());
    ASSERT_EQ(d.size(), 1u) << join(d);
    EXPECT_EQ(d[0].to_string(), m.string() + ":6: script '/bin/true' must be a relative path inside the plugin (like "
                                             "./hooks/check.sh), not an absolute or ~/ path");
  }
  // Plugin hooks come after hooks/*.yaml, ordered by plugin name.
  Tree t2;
  t2.write("config/hooks/a.yaml", "hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: echo a\n");
  for (std::string n : {"zeta", "alpha"})
    t2.write("config/plugins/" + n + "/.openvaala-plugin/plugin.yaml",
             "name: " + n + "\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: echo " + n +
                 "\n");
  Diagnostics d2;
  auto e2 = t2.load(d2);
  ASSERT_EQ(e2->hooks().hooks.size(), 3u) << join(d2);
  EXPECT_EQ(e2->hooks().hooks[0].plugin_name, "");
  EXPECT_EQ(e2->hooks().hooks[1].plugin_name, "alpha");
  EXPECT_EQ(e2->hooks().hooks[2].plugin_name, "zeta");
}
