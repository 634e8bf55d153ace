#pragma once
// The OpenVaala engine (seed `openvaala-extending.zh.txt`: Skill, 项目说明, MCP server files, 插件):
// one immutable snapshot of everything the config root declares, and what one session sees.
//
//   config::Diagnostics diags;
//   auto engine = engine::Engine::load(config::config_root(), diags);
//   if (engine->failed()) { /* keep the previous snapshot (reload) or report (startup) */ }
//   auto view = engine->session_view(session.cwd, agent_name);
//   view.available_commands();           // ACP availableCommands
//   view.system_prompt_block();          // agent instructions + skills + AGENTS.md chain
//   auto x = engine::expand_slash_command(view, prompt_text);
//
// Every problem is a config::Diagnostic (`path:line: message`). Errors are what
// `openvaala config check` exits 1 on; `failed()` is narrower: the errors the seed says make the
// whole load fail (a broken plugin manifest, a hook that does not load — hooks/*.yaml or a plugin's
// hook section —, a broken config.yaml, two enabled plugins with one MCP id).
//
// Threading: Engine::load and session_view block on file I/O (a large config: ~60 ms, see
// docs/PERFORMANCE.md), so run them off the connection's thread. A loaded Engine is immutable and
// may be shared across threads (hold the shared_ptr for the session's lifetime or swap on reload).
// AGENTS.md: session_view reads the chain once; per turn, call load_agents_md_chain(cwd) again
// (the seed gives the files at the start of every turn), and agents_md_for_read after read_file.
#include <boost/json.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/protocol/events.hpp"
#include "runtime/config/diagnostic.hpp"
#include "runtime/config/executor_config.hpp"
#include "runtime/config/main_config.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/hooks/plugin_hook_source.hpp"

namespace runtime::engine {

namespace fs = std::filesystem;
using config::Diagnostic;
using config::Diagnostics;

// ---------------------------------------------------------------------------------------------
// Skills

// The seven places, in the seed's order (first one wins on a name clash).
enum class SkillSource {
  ProjectAgents,  // <cwd>/.agents/skills/
  ProjectClaude,  // <cwd>/.claude/skills/
  Private,        // skills.directory, default <config root>/skills/
  Builtin,        // shipped with the binary (the `openvaala` skill)
  Plugin,         // enabled plugins, named <plugin>:<skill>
  HomeAgents,     // ~/.agents/skills/
  HomeClaude,     // ~/.claude/skills/
};
std::string_view source_label(SkillSource s);  // "project .agents/skills", "plugin", ...
std::string_view source_id(SkillSource s);     // "project-agents", "plugin", ... (JSON)

struct Skill {
  std::string name;  // what the model and `/name` use; `<plugin>:<skill>` for plugin skills
  std::string description;
  std::string argument_hint;  // shown after `/name` in the editor's command list; empty: a generic hint
  fs::path file;     // absolute path of SKILL.md (through symlinks as found, not resolved)
  SkillSource source = SkillSource::Private;
  std::string plugin;  // plugin name for plugin skills
  // The executor `file` is on (DESIGN §10): the session's default executor for the working
  // directory and home places, `local` for the private skills and plugins, `openvaala` for the
  // built-in skills of a session on another executor.
  std::string executor = "local";
  std::shared_ptr<const std::string> text;  // SKILL.md as read there, when `file` is not local
};

// Skills are shared, never copied: an engine's thousands of skills are the same objects in every
// session's view (a view per session, rebuilt on every reload, would otherwise copy them all).
using SkillPtr = std::shared_ptr<const Skill>;

// What the search saw of a SKILL.md, so that a watch added after the read can tell whether the file
// changed in between. mtime and size alone miss a write in the same timestamp tick as the read
// (an editor's create-then-write): a file modified that close to its read is `racy` and is read
// again once watched, as git does with racily clean index entries.
struct FileStamp {
  std::int64_t mtime_ns = 0;
  std::int64_t size = 0;
  bool racy = false;
};

// The folders a place's skill search entered, in its order (a folder holding SKILL.md ends the
// search below it): what a running server watches for changes (runtime/agent/skill_watcher).
struct SkillFolder {
  fs::path dir;
  bool holds_skill_file = false;  // a SKILL.md is there (loaded or skipped); else searched for skills
  // What the search saw, so that a watch added after it can tell what changed in between: the
  // SKILL.md's stamp, or how many folders were searched below this one.
  FileStamp skill_file;
  std::size_t subfolders = 0;
};

// A place whose skills a running server re-reads when their files change: skills.directory,
// ~/.agents/skills, ~/.claude/skills. `folders` is shared by an engine and the copies made when a
// SKILL.md changes (Engine::with_skills_read_again): the folders are the same, only skills differ.
struct SkillPlace {
  SkillSource source = SkillSource::Private;
  fs::path root;
  std::shared_ptr<const std::vector<SkillFolder>> folders;
  std::vector<SkillPtr> skills;  // one per folder: null where none loaded (not a skill, or skipped)
};

constexpr std::uintmax_t kMaxSkillFileBytes = 1024 * 1024;  // larger SKILL.md files are not read

// ---------------------------------------------------------------------------------------------
// MCP server configuration (mcp_servers/<id>.yaml, plugin manifests, Agent Plugins mcp.json)

struct McpServerConfig {
  enum class Transport { Stdio, Http, Sse };
  std::string id;
  Transport transport = Transport::Stdio;
  // stdio
  std::string command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;  // on top of the inherited environment (already expanded)
  std::optional<fs::path> cwd;             // absent: the executor's working directory
  // http / sse
  std::string url;
  std::map<std::string, std::string> headers;
  // `oauth:` (http / sse): a client registered by hand, for servers without dynamic
  // registration, and the scopes to ask for. Absent: dynamic registration, the server's scopes.
  struct OAuth {
    std::string client_id;          // empty: register dynamically
    std::string client_secret_env;  // the variable holding the client secret; empty: public client
    std::vector<std::string> scopes;
    int callback_port = 0;          // the loopback redirect port; 0: any free one
  };
  std::optional<OAuth> oauth;

  std::vector<std::string> executors{"local"};
  std::optional<std::vector<std::string>> tools;  // absent: every tool
  bool required = false;
  bool disabled = false;
  double startup_timeout_seconds = 30;
  double tool_timeout_seconds = 300;

  fs::path source_file;  // the YAML / JSON file it was declared in
  int source_line = 0;
  std::string plugin;    // the plugin that declared it; empty for mcp_servers/<id>.yaml
};
std::string_view transport_name(McpServerConfig::Transport t);  // "stdio" | "http" | "sse"

// ---------------------------------------------------------------------------------------------
// Agents (agents/<name>.yaml)

struct Agent {
  std::string name;
  std::string description;
  std::string instructions;               // guidance for every project
  std::optional<std::string> model;       // "<provider>/<model>"; absent: config.yaml's model
  std::optional<std::vector<std::string>> mcp_servers;  // absent: all; []: none
  std::optional<std::vector<std::string>> skills;       // absent: all
  std::optional<std::string> executor;    // the sessions' default executor; absent: default_executor
  fs::path file;                          // empty for the built-in `default` agent
};

// ---------------------------------------------------------------------------------------------
// Plugins

struct InstallRecord {  // <plugin>/.openvaala-install.yaml, written by `plugin install`
  std::string source;   // git URL or absolute local folder
  std::string ref;      // may be empty (default branch)
  std::string path;     // folder inside the source; empty = root
  std::string commit;   // empty for local folders that are not git repositories
};

struct PluginInfo {
  enum class Format { OpenVaala, Codex, Claude, AgentPlugins };
  std::string name;
  std::string version;
  std::string description;
  Format format = Format::OpenVaala;
  fs::path root;      // <config root>/plugins/<dir>
  fs::path manifest;  // the manifest file used
  bool enabled = true;
  bool valid = true;  // false when its manifest is broken
  std::vector<std::string> skill_names;       // full names
  std::vector<std::string> mcp_server_ids;    // servers it contributes (after overrides)
  int hook_events = 0;                        // events in its `hooks:` section
  std::optional<InstallRecord> install;
};
std::string_view format_name(PluginInfo::Format f);  // "openvaala" | "codex" | "claude" | "agent-plugins"

// ---------------------------------------------------------------------------------------------
// AGENTS.md

struct AgentsMdFile {
  fs::path path;
  std::string content;
};

// The git root of `dir` (walking up to a `.git` file or folder); empty when not in a repo.
fs::path find_git_root(const fs::path& dir);
// Every AGENTS.md from the git root down to cwd (only cwd's outside a repo), shallowest first.
// Empty or whitespace-only files are left out.
std::vector<AgentsMdFile> load_agents_md_chain(const fs::path& cwd);
// The text given to the model for these files (deeper ones are marked as taking precedence).
std::string agents_md_prompt(const std::vector<AgentsMdFile>& files);
// An AGENTS.md read somewhere (an executor): nullopt when empty or whitespace-only; cut at 1 MB.
std::optional<AgentsMdFile> agents_md_file(fs::path path, std::string text);

// What a session's default executor holds when it is not `local` (DESIGN §10), read through
// that executor: the SKILL.md files of its working-directory and home skill places and its
// AGENTS.md chain. Paths are absolute there.
struct ExecutorSnapshot {
  std::string executor;  // its id
  fs::path workdir;      // empty when it could not be read (then nothing else is set)
  fs::path home;
  std::map<fs::path, std::string> skill_files;  // every SKILL.md under the four places, by path
  std::vector<AgentsMdFile> agents_md;          // git root (or workdir) down to workdir
};

// ---------------------------------------------------------------------------------------------
// What a session sees

struct SessionView {
  fs::path cwd;
  std::string executor = "local";  // the default executor its skills and AGENTS.md were read on
  fs::path git_root;  // empty outside a repo
  Agent agent;
  std::vector<SkillPtr> skills;         // available to this agent, in the seven places' order
  std::vector<SkillPtr> shadowed;       // lost a name clash to an earlier place
  std::vector<SkillPtr> not_for_agent;  // found, but not in this agent's `skills` list
  std::vector<AgentsMdFile> agents_md;
  std::vector<McpServerConfig> mcp_servers;  // selected by the agent, not disabled
  Diagnostics diagnostics;                   // project-level skill problems (skipped skills)

  const Skill* find_skill(std::string_view name) const;
  // Puts `after` where `before` is (a SKILL.md read again), when both have the same name: which
  // skills the view has, shadows or leaves out depends only on names. False (nothing changed) when
  // the names differ: build the view again.
  bool swap_skill(const SkillPtr& before, const SkillPtr& after);
  // The slash commands the editor offers: one per skill.
  std::vector<AvailableCommand> available_commands() const;
  std::string skills_prompt() const;        // name, description and path of each skill
  std::string instructions_prompt() const;  // the agent's instructions ("" when none)
  std::string agents_md_prompt() const;     // the AGENTS.md chain
  // All three, ready to append to the system prompt.
  std::string system_prompt_block() const;
};

class Engine {
 public:
  struct Options {
    fs::path config_root;
    fs::path home;                // ~ for ~/.agents/skills and ~/.claude/skills
    fs::path builtin_skills_dir;  // where built-in skills are written so the model can read them
    fs::path plugin_data_root;    // ${PLUGIN_DATA} of Agent Plugins = <this>/<plugin name>
    // false: everything but the skills (no SKILL.md is read).
    bool skills = true;
    // false: the settings alone (config.yaml, agents, executors); no plugin, hook, MCP server or
    // skill file is read. The server loads that first, so that session/new waits only for what
    // its answer needs; then without the skills (a session's MCP servers and hooks); then whole.
    bool extensions = true;
  };
  // Options from the environment: $HOME, <cache dir>/builtin-skills/<version>,
  // <data dir>/plugin-data.
  static Options default_options(const fs::path& config_root);

  // Never null. Diagnostics are appended to `diags` (and kept in diagnostics()).
  static std::shared_ptr<const Engine> load(const fs::path& config_root, Diagnostics& diags);
  static std::shared_ptr<const Engine> load(const Options& options, Diagnostics& diags);

  // The load failed as a whole: on reload keep the previous snapshot; `plugin` commands roll back.
  bool failed() const { return failed_; }
  const Diagnostics& diagnostics() const { return diags_; }
  const Options& options() const { return options_; }
  // False for an engine loaded without its skills (Options::skills): its skill lists are empty.
  bool skills_loaded() const { return options_.skills && options_.extensions; }
  // False for the settings alone (Options::extensions): no plugins, hooks or MCP servers.
  bool extensions_loaded() const { return options_.extensions; }

  const config::MainConfig& main_config() const { return main_; }

  // Agents, including a built-in `default` (all skills, all servers) unless agents/default.yaml
  // exists. Sorted by name.
  const std::map<std::string, Agent>& agents() const { return agents_; }
  const std::string& default_agent() const { return default_agent_; }
  const Agent* find_agent(std::string_view name) const;
  // `name` when such an agent exists, else the default agent's name.
  const std::string& agent_or_default(std::string_view name) const;

  const std::vector<PluginInfo>& plugins() const { return plugins_; }  // enabled or not, by name
  const PluginInfo* find_plugin(std::string_view name) const;
  // Every MCP server after merging (user files win over plugin entries), disabled ones included.
  const std::vector<McpServerConfig>& mcp_servers() const { return mcp_servers_; }
  // The servers an agent may use: its `mcp_servers` selection, without disabled ones.
  std::vector<McpServerConfig> mcp_servers_for(const Agent& agent) const;
  // `hooks:` sections of enabled OpenVaala-format plugins, sorted by plugin name.
  const std::vector<hooks::PluginHookSource>& plugin_hook_sources() const { return hook_sources_; }
  // hooks/*.yaml and the enabled plugins' hooks, loaded with hooks::load_hooks (any hook error
  // fails the load; one in a plugin's `hooks:` section also marks the plugin invalid).
  const hooks::HookSet& hooks() const { return hooks_; }
  // Skills from places 3-7 (private, built-in, plugins, ~/.agents, ~/.claude), in that order,
  // every one found (name clashes are resolved in session_view).
  const std::vector<SkillPtr>& user_level_skills() const { return user_skills_; }
  // The watched places (skills.directory, ~/.agents/skills, ~/.claude/skills); empty without skills.
  const std::vector<SkillPlace>& skill_places() const { return skill_places_; }
  // A skill replaced when its SKILL.md was read again; null `after`: it no longer loads, null
  // `before`: it did not load until now.
  struct SkillSwap {
    SkillPtr before, after;
  };
  // This engine with the SKILL.md files in `dirs` (folders of its skill places) read again, the
  // rest shared: what a changed SKILL.md costs instead of a whole load (milliseconds, not a
  // second, at 20,000 skills). Null when the change is not one in place (a folder it did not
  // search or that held no SKILL.md, a SKILL.md gone): then the whole load is needed. The files'
  // problems are appended to `diags` (and replace theirs in diagnostics()).
  std::shared_ptr<const Engine> with_skills_read_again(const std::vector<fs::path>& dirs, std::vector<SkillSwap>& swaps,
                                                       Diagnostics& diags) const;
  // executors/*.yaml that loaded, by id (the built-in local and openvaala are not in it).
  const std::map<std::string, config::ExecutorConfig>& executors() const { return executors_; }
  bool has_executor(std::string_view id) const;
  // The default executor of a session with this agent: the agent's, else default_executor, else local.
  std::string default_executor(const Agent& agent) const;

  // What a session in `cwd` with this agent sees (empty name: the default agent; an unknown
  // name falls back to the default agent). Reads the project's skills and AGENTS.md now, or,
  // for a session on another executor, takes them from `on` (read there).
  SessionView session_view(const fs::path& cwd, std::string_view agent_name = {},
                           const ExecutorSnapshot* on = nullptr) const;

 private:
  struct LoadContext;  // load's steps and what they share (engine_load.cpp)
  Engine() = default;
  Engine(const Engine&) = default;
  // user_skills_ from the places and the skills between them (built-in, plugins).
  void compose_user_skills();

  Options options_;
  Diagnostics diags_;
  bool failed_ = false;
  config::MainConfig main_;
  std::map<std::string, Agent> agents_;
  std::string default_agent_;
  std::vector<PluginInfo> plugins_;
  std::vector<McpServerConfig> mcp_servers_;
  std::vector<hooks::PluginHookSource> hook_sources_;
  hooks::HookSet hooks_;
  std::vector<SkillPtr> user_skills_;
  std::vector<SkillPlace> skill_places_;  // private, ~/.agents/skills, ~/.claude/skills
  std::vector<SkillPtr> fixed_skills_;    // built-in and plugin skills (not watched)
  std::map<std::string, config::ExecutorConfig> executors_;
};

// ---------------------------------------------------------------------------------------------
// Slash commands (DESIGN §7)

struct SlashExpansion {
  enum class Kind {
    Unchanged,  // not a command, or `/name` with no such skill: send `text` as typed
    Expanded,   // `text` is the skill's SKILL.md plus the user's request
    Refused,    // `/skill:name` for a skill this agent cannot use: show `error`, do not send
  };
  Kind kind = Kind::Unchanged;
  std::string text;
  std::string skill;  // the skill's name when expanded
  std::string error;
};
// `/name rest` and `/skill:name rest` (plugin skills `/plugin:skill`). Leading whitespace before
// the slash is allowed; `rest` is everything after the command (further lines included).
SlashExpansion expand_slash_command(const SessionView& view, std::string_view prompt_text);

// The folders from below `cwd` down to the one holding `path_read` (itself when
// `path_read_is_folder`), shallowest first; none when it is not below `cwd`. `path_read` may be
// relative to `cwd`. Where deeper AGENTS.md files are looked for, on any executor.
std::vector<fs::path> folders_below(fs::path cwd, const fs::path& path_read, bool path_read_is_folder);

// The AGENTS.md files between the session's cwd (exclusive) and the folder of `path_read`
// (inclusive), shallowest first, leaving out those in `already_included` (absolute paths) and
// files outside cwd. `path_read` may be relative to cwd.
std::vector<AgentsMdFile> agents_md_for_read(const SessionView& view, const fs::path& path_read,
                                             const std::set<fs::path>& already_included);

// The built-in `openvaala` skill's SKILL.md text (runtime/builtin_skills/openvaala/SKILL.md).
std::string_view builtin_openvaala_skill();

}  // namespace runtime::engine
