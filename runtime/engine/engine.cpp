#include "runtime/engine/engine.hpp"
#include "support/file_io.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>
#include <unistd.h>

#include "runtime/config/paths.hpp"
#include "runtime/engine/loaders.hpp"
#include "runtime/engine/parallel.hpp"
#include "runtime/engine/paths.hpp"
#include "support/text.hpp"

namespace runtime::engine {

namespace json = boost::json;
using Severity = Diagnostic::Severity;

std::string_view source_label(SkillSource s) {
  switch (s) {
    case SkillSource::ProjectAgents: return "project .agents/skills";
    case SkillSource::ProjectClaude: return "project .claude/skills";
    case SkillSource::Private: return "private skills directory";
    case SkillSource::Builtin: return "built-in";
    case SkillSource::Plugin: return "plugin";
    case SkillSource::HomeAgents: return "~/.agents/skills";
    case SkillSource::HomeClaude: return "~/.claude/skills";
  }
  return "";
}

std::string_view source_id(SkillSource s) {
  switch (s) {
    case SkillSource::ProjectAgents: return "project-agents";
    case SkillSource::ProjectClaude: return "project-claude";
    case SkillSource::Private: return "private";
    case SkillSource::Builtin: return "builtin";
    case SkillSource::Plugin: return "plugin";
    case SkillSource::HomeAgents: return "home-agents";
    case SkillSource::HomeClaude: return "home-claude";
  }
  return "";
}

Engine::Options Engine::default_options(const fs::path& config_root) {
  Options o;
  o.config_root = config_root;
  const char* home = std::getenv("HOME");
  o.home = home && *home ? fs::path(home) : fs::path("/");
  o.builtin_skills_dir = config::cache_dir() / "builtin-skills" / OPENVAALA_VERSION;
  o.plugin_data_root = config::data_dir() / "plugin-data";
  return o;
}

std::shared_ptr<const Engine> Engine::load(const fs::path& config_root, Diagnostics& diags) {
  return load(default_options(config_root), diags);
}

namespace {

// Writes the built-in skills under `dir` (only when the content differs) and returns their folders.
void materialize_builtin(const fs::path& dir, std::vector<Skill>& out, Diagnostics& diags) {
  fs::path skill_dir = dir / "openvaala";
  fs::path file = skill_dir / "SKILL.md";
  const std::string_view text = builtin_openvaala_skill();
  auto current = support::read_file(file);
  if (!current || *current != text) {
    std::error_code ec;
    config::create_private_directories(skill_dir, ec);
    fs::path tmp = file;
    tmp += ".tmp" + std::to_string(::getpid());
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    o.write(text.data(), static_cast<std::streamsize>(text.size()));
    o.close();
    if (!o || (fs::rename(tmp, file, ec), ec)) {
      fs::remove(tmp, ec);
      diags.push_back({Severity::Warning, file.string(), 0,
                       "cannot write the built-in 'openvaala' skill here; it is not offered in this session"});
      return;
    }
  }
  if (auto s = detail::load_skill(skill_dir, SkillSource::Builtin, "", Severity::Error, diags)) out.push_back(*s);
}

int line_of_key_in_file(const fs::path& file, const std::string& key) {
  auto text = support::read_file(file);
  if (!text) return 0;
  std::size_t pos = 0;
  int line = 1;
  while (pos < text->size()) {
    auto nl = text->find('\n', pos);
    std::string_view l(text->data() + pos, (nl == std::string::npos ? text->size() : nl) - pos);
    if (l.rfind(key + ":", 0) == 0) return line;
    if (nl == std::string::npos) break;
    pos = nl + 1;
    ++line;
  }
  return 0;
}

// One plugin folder, read by a worker thread of Engine::load.
struct PluginRead {
  bool has_manifest = false;  // folders without one are skipped
  bool disabled = false;
  detail::LoadedPlugin lp;
  Diagnostics diags;      // the plugin loader's (none for a disabled plugin)
  hooks::HookSet hooks;   // its `hooks:` section, validated by the hook loader
  Diagnostics hook_diags;
};

PluginRead read_plugin(const fs::path& dir, const std::set<std::string>& disabled, const Engine::Options& options) {
  PluginRead r;
  if (!detail::detect_manifest(dir)) return r;
  r.has_manifest = true;
  r.disabled = disabled.count(dir.filename().string()) > 0;
  if (!r.disabled && !disabled.empty()) r.disabled = disabled.count(detail::plugin_declared_name(dir)) > 0;
  if (r.disabled) {
    // Disabled plugins are listed but not validated: a broken plugin can always be disabled.
    Diagnostics ignored;
    r.lp = detail::load_plugin(dir, options, ignored);
    return r;
  }
  r.lp = detail::load_plugin(dir, options, r.diags);
  if (r.lp.hooks) hooks::load_plugin_hooks(*r.lp.hooks, r.hooks, r.hook_diags);
  return r;
}

// Two enabled plugin folders whose manifests claim one name (a copy "p12" that says "p2" beside
// "p2"): the folder named so keeps the name, else the first folder; for each other one, the
// folder that keeps its name (empty: none).
std::vector<fs::path> names_taken(const std::vector<fs::path>& dirs, const std::vector<PluginRead>& reads) {
  std::map<std::string, std::size_t> keeper;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    if (!reads[i].has_manifest || reads[i].disabled) continue;
    const std::string& name = reads[i].lp.info.name;
    auto [it, first] = keeper.emplace(name, i);
    if (!first && dirs[i].filename() == name && dirs[it->second].filename() != name) it->second = i;
  }
  std::vector<fs::path> taken(dirs.size());
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    if (!reads[i].has_manifest || reads[i].disabled) continue;
    const std::size_t k = keeper.at(reads[i].lp.info.name);
    if (k != i) taken[i] = dirs[k];
  }
  return taken;
}

}  // namespace

std::shared_ptr<const Engine> Engine::load(const Options& options, Diagnostics& out_diags) {
  std::shared_ptr<Engine> e(new Engine());
  e->options_ = options;
  Diagnostics& diags = e->diags_;

  // config.yaml: its errors fail the load (on reload the previous configuration stays).
  e->main_ = config::load_main_config(options.config_root, diags);
  if (config::has_errors(diags)) e->failed_ = true;

  // Private skills (errors), built-in skills (errors).
  fs::path private_dir = e->main_.skills_directory
                             ? expand_home(*e->main_.skills_directory, options.home)
                             : options.config_root / "skills";
  if (private_dir.is_relative()) private_dir = options.config_root / private_dir;

  // Every file below is read by tasks spread over the cores (detail::parallel_for). Each task
  // writes only its own slot; the slots are merged afterwards in the order one thread would have
  // produced them, so skills, hooks, diagnostics and their order do not depend on timing.
  std::vector<fs::path> plugin_dirs;
  std::error_code ec;
  const fs::path plugins_root = options.extensions ? options.config_root / "plugins" : fs::path();
  for (fs::directory_iterator it(plugins_root, ec), end; !plugins_root.empty() && !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    std::error_code ec2;
    if (name.empty() || name[0] == '.' || !it->is_directory(ec2)) continue;
    plugin_dirs.push_back(it->path());
  }
  std::sort(plugin_dirs.begin(), plugin_dirs.end());
  const std::set<std::string> disabled(e->main_.plugins_disabled.begin(), e->main_.plugins_disabled.end());
  Diagnostics hook_diags;  // hooks::load_hooks' diagnostics, in its order
  const std::vector<fs::path> hook_files =
      options.extensions ? hooks::list_hook_files(options.config_root, hook_diags) : std::vector<fs::path>{};

  struct SkillScan {
    std::vector<Skill> skills;
    Diagnostics diags;
  };
  SkillScan builtin;
  // The watched places, in the seed's order: private, ~/.agents/skills, ~/.claude/skills.
  struct PlaceScan {
    SkillPlace place;
    Diagnostics diags;
  };
  PlaceScan priv, home_agents, home_claude;
  std::vector<McpServerConfig> user_servers;
  Diagnostics mcp_diags, agent_diags, executor_diags;
  std::vector<PluginRead> plugin_reads(plugin_dirs.size());
  std::vector<hooks::HookSet> file_hooks(hook_files.size());
  std::vector<Diagnostics> file_hook_diags(hook_files.size());
  std::vector<std::function<void()>> tasks;
  if (options.skills && options.extensions)  // the long ones first (one task per skill folder tree)
    tasks = {
        [&] { priv.place = detail::scan_skill_place(private_dir, SkillSource::Private, Severity::Error, priv.diags); },
        [&] {
          home_agents.place = detail::scan_skill_place(options.home / ".agents" / "skills", SkillSource::HomeAgents,
                                                       Severity::Warning, home_agents.diags);
        },
        [&] {
          home_claude.place = detail::scan_skill_place(options.home / ".claude" / "skills", SkillSource::HomeClaude,
                                                       Severity::Warning, home_claude.diags);
        },
        [&] {
          if (!options.builtin_skills_dir.empty())
            materialize_builtin(options.builtin_skills_dir, builtin.skills, builtin.diags);
        },
    };
  if (options.extensions)
    tasks.push_back([&] { user_servers = detail::load_mcp_server_files(options.config_root, mcp_diags); });
  tasks.push_back([&] { e->agents_ = detail::load_agent_files(options.config_root, agent_diags); });
  tasks.push_back([&] { e->executors_ = detail::load_executor_files(options.config_root, options.home, executor_diags); });
  for (std::size_t i = 0; i < plugin_dirs.size(); ++i)
    tasks.push_back([&, i] { plugin_reads[i] = read_plugin(plugin_dirs[i], disabled, options); });
  for (std::size_t i = 0; i < hook_files.size(); ++i)
    tasks.push_back([&, i] { hooks::load_hook_file(hook_files[i], file_hooks[i], file_hook_diags[i]); });
  detail::parallel_for(tasks.size(), [&](std::size_t i) { tasks[i](); });

  // MCP server files.
  diags.insert(diags.end(), mcp_diags.begin(), mcp_diags.end());
  std::set<std::string> user_ids;
  for (const auto& s : user_servers) user_ids.insert(s.id);

  // Plugins, in folder-name order.
  std::set<std::string> disabled_seen;
  std::vector<Skill> plugin_skills;
  std::vector<McpServerConfig> plugin_servers;
  std::map<std::string, std::string> plugin_server_owner;
  std::vector<PluginRead*> with_hooks;
  const std::vector<fs::path> taken = names_taken(plugin_dirs, plugin_reads);
  for (std::size_t i = 0; i < plugin_dirs.size(); ++i) {
    PluginRead& r = plugin_reads[i];
    if (!r.has_manifest) continue;  // no manifest: skipped
    detail::LoadedPlugin& lp = r.lp;
    if (!taken[i].empty()) {
      // Refused: one name must mean one plugin (its skills, hooks, `plugin disable`, its copy on an executor).
      diags.push_back({Severity::Error, lp.info.manifest.string(), 0,
                       "plugin name '" + lp.info.name + "' is taken by the plugin in " + taken[i].string() +
                           "; the plugin in " + plugin_dirs[i].string() +
                           " is not loaded (give it another name, or remove or disable one)"});
      e->failed_ = true;
      continue;
    }
    if (r.disabled) {
      PluginInfo info = lp.info;
      info.enabled = false;
      info.mcp_server_ids.clear();
      disabled_seen.insert(plugin_dirs[i].filename().string());
      disabled_seen.insert(info.name);
      e->plugins_.push_back(std::move(info));
      continue;
    }
    diags.insert(diags.end(), r.diags.begin(), r.diags.end());
    if (lp.fatal) e->failed_ = true;
    for (auto& s : lp.skills) plugin_skills.push_back(std::move(s));
    for (auto& s : lp.mcp_servers) {
      if (user_ids.count(s.id)) continue;  // mcp_servers/<id>.yaml wins
      if (auto it = plugin_server_owner.find(s.id); it != plugin_server_owner.end()) {
        diags.push_back({Severity::Error, s.source_file.string(), s.source_line,
                         "MCP server id '" + s.id + "' is also declared by the enabled plugin '" + it->second +
                             "'; two enabled plugins cannot declare the same id (disable one, or put a file " + s.id +
                             ".yaml in mcp_servers/)"});
        e->failed_ = true;
        continue;
      }
      plugin_server_owner[s.id] = lp.info.name;
      lp.info.mcp_server_ids.push_back(s.id);
      plugin_servers.push_back(std::move(s));
    }
    if (lp.hooks) with_hooks.push_back(&r);
    e->plugins_.push_back(std::move(lp.info));
  }
  for (const auto& d : e->main_.plugins_disabled)
    if (options.extensions && !disabled_seen.count(d))
      diags.push_back({Severity::Warning, e->main_.file.string(), line_of_key_in_file(e->main_.file, "plugins"),
                       "plugins.disabled names '" + d + "', which is not an installed plugin"});
  std::stable_sort(with_hooks.begin(), with_hooks.end(), [](const PluginRead* a, const PluginRead* b) {
    return a->lp.hooks->plugin_name < b->lp.hooks->plugin_name;
  });
  std::sort(e->plugins_.begin(), e->plugins_.end(), [](const auto& a, const auto& b) { return a.name < b.name; });

  {
    // Hooks, as hooks::load_hooks would return them: hooks/*.yaml in file order, then the plugins'
    // sections by plugin name. A problem in a plugin's `hooks:` section is a problem of its manifest.
    auto append = [&](hooks::HookSet& set, Diagnostics& d) {
      for (auto& h : set.hooks) e->hooks_.hooks.push_back(std::move(h));
      hook_diags.insert(hook_diags.end(), d.begin(), d.end());
    };
    for (std::size_t i = 0; i < hook_files.size(); ++i) append(file_hooks[i], file_hook_diags[i]);
    for (PluginRead* r : with_hooks) {
      append(r->hooks, r->hook_diags);
      e->hook_sources_.push_back(std::move(*r->lp.hooks));
    }
    std::set<std::string> manifests;
    for (const auto& h : e->hook_sources_) manifests.insert(h.manifest_file.string());
    for (auto& d : hook_diags) {
      // The plugin loader already reported escaping script paths at this line: keep one message.
      bool dup = manifests.count(d.path) && std::any_of(diags.begin(), diags.end(), [&](const Diagnostic& x) {
        return x.path == d.path && x.line == d.line && x.severity == d.severity;
      });
      if (dup) continue;
      if (d.severity == Severity::Error) {
        // A hook that does not load would silently stop guarding: the whole load fails.
        e->failed_ = true;
        if (manifests.count(d.path))
          for (auto& p : e->plugins_)
            if (p.manifest.string() == d.path) p.valid = false;
      }
      diags.push_back(std::move(d));
    }
  }
  e->mcp_servers_ = std::move(user_servers);
  for (auto& s : plugin_servers) e->mcp_servers_.push_back(std::move(s));

  // ~/.agents/skills and ~/.claude/skills: malformed ones are skipped.
  // Places 3-7 in order: private, built-in, plugins, ~/.agents/skills, ~/.claude/skills.
  for (auto* part : {&builtin.skills, &plugin_skills})
    for (auto& sk : *part) e->fixed_skills_.push_back(std::make_shared<const Skill>(std::move(sk)));
  if (options.skills && options.extensions)
    for (auto* scan : {&priv, &home_agents, &home_claude}) e->skill_places_.push_back(std::move(scan->place));
  e->compose_user_skills();
  diags.insert(diags.begin(), builtin.diags.begin(), builtin.diags.end());
  diags.insert(diags.begin(), priv.diags.begin(), priv.diags.end());
  diags.insert(diags.end(), home_agents.diags.begin(), home_agents.diags.end());
  diags.insert(diags.end(), home_claude.diags.begin(), home_claude.diags.end());

  // Executors, then who names them.
  diags.insert(diags.end(), executor_diags.begin(), executor_diags.end());
  auto executor_names = [&] {
    std::string names = "local, openvaala";
    for (const auto& [id, _] : e->executors_) names += ", " + id;
    return names;
  };
  if (e->main_.default_executor && !e->has_executor(*e->main_.default_executor))
    diags.push_back({Severity::Error, e->main_.file.string(), line_of_key_in_file(e->main_.file, "default_executor"),
                     "default_executor '" + *e->main_.default_executor + "' is not an executor (available: " +
                         executor_names() + ")"});

  // Agents.
  diags.insert(diags.end(), agent_diags.begin(), agent_diags.end());
  for (const auto& [name, a] : e->agents_)
    if (a.executor && !e->has_executor(*a.executor))
      diags.push_back({Severity::Error, a.file.string(), line_of_key_in_file(a.file, "executor"),
                       "executor '" + *a.executor + "' is not an executor (available: " + executor_names() + ")"});
  std::set<std::string> all_ids;
  for (const auto& s : e->mcp_servers_) all_ids.insert(s.id);
  for (const auto& [name, a] : e->agents_) {
    if (!a.mcp_servers || !options.extensions) continue;  // the settings alone have no MCP servers
    for (const auto& id : *a.mcp_servers)
      if (!all_ids.count(id))
        diags.push_back({Severity::Error, a.file.string(), line_of_key_in_file(a.file, "mcp_servers"),
                         "mcp_servers names '" + id + "', which is not a configured MCP server"});
  }
  if (!e->agents_.count("default")) {
    Agent d;
    d.name = "default";
    d.description = "All skills and MCP servers";
    e->agents_["default"] = std::move(d);
  }
  e->default_agent_ = "default";
  if (e->main_.default_agent) {
    if (e->agents_.count(*e->main_.default_agent)) {
      e->default_agent_ = *e->main_.default_agent;
    } else {
      std::string names;
      for (const auto& [n, _] : e->agents_) names += (names.empty() ? "" : ", ") + n;
      diags.push_back({Severity::Error, e->main_.file.string(), line_of_key_in_file(e->main_.file, "default_agent"),
                       "default_agent '" + *e->main_.default_agent + "' is not an agent in agents/ (available: " +
                           names + ")"});
    }
  }
  out_diags.insert(out_diags.end(), diags.begin(), diags.end());
  return e;
}

bool Engine::has_executor(std::string_view id) const {
  return id == config::kLocalExecutor || id == config::kOpenvaalaExecutor || executors_.count(std::string(id));
}

std::string Engine::default_executor(const Agent& agent) const {
  if (agent.executor && has_executor(*agent.executor)) return *agent.executor;
  if (main_.default_executor && has_executor(*main_.default_executor)) return *main_.default_executor;
  return config::kLocalExecutor;
}

const Agent* Engine::find_agent(std::string_view name) const {
  auto it = agents_.find(std::string(name));
  return it == agents_.end() ? nullptr : &it->second;
}

const PluginInfo* Engine::find_plugin(std::string_view name) const {
  for (const auto& p : plugins_)
    if (p.name == name || p.root.filename() == name) return &p;
  return nullptr;
}

const std::string& Engine::agent_or_default(std::string_view name) const {
  auto it = agents_.find(std::string(name));
  return it != agents_.end() ? it->first : default_agent_;
}

std::vector<McpServerConfig> Engine::mcp_servers_for(const Agent& agent) const {
  std::vector<McpServerConfig> out;
  for (const auto& s : mcp_servers_) {
    if (s.disabled) continue;
    if (agent.mcp_servers &&
        std::find(agent.mcp_servers->begin(), agent.mcp_servers->end(), s.id) == agent.mcp_servers->end())
      continue;
    out.push_back(s);
  }
  return out;
}

}  // namespace runtime::engine
