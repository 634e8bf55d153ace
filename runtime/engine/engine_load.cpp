// Engine::load: one named step per kind of configuration, over a shared LoadContext.
//
// The files are read by tasks spread over the cores (detail::parallel_for, step read_files). Each
// task writes only its own slot of the context; the later steps merge the slots in the order one
// thread would have produced them, so skills, hooks, diagnostics and their order do not depend on
// timing. A new kind of configuration is one more slot, one more read task and one more step.
#include "runtime/engine/engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>

#include "runtime/config/paths.hpp"
#include "runtime/engine/loaders.hpp"
#include "runtime/engine/parallel.hpp"
#include "runtime/engine/paths.hpp"
#include "support/file_io.hpp"

namespace runtime::engine {

using Severity = Diagnostic::Severity;

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

// The plugin folders under config_root/plugins (not dot folders), sorted; none without extensions.
std::vector<fs::path> list_plugin_dirs(const Engine::Options& options) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path plugins_root = options.extensions ? options.config_root / "plugins" : fs::path();
  for (fs::directory_iterator it(plugins_root, ec), end; !plugins_root.empty() && !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    std::error_code ec2;
    if (name.empty() || name[0] == '.' || !it->is_directory(ec2)) continue;
    dirs.push_back(it->path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

void append(Diagnostics& to, const Diagnostics& from) { to.insert(to.end(), from.begin(), from.end()); }

}  // namespace

// What Engine::load's steps share: the engine being filled, the inputs listed before the reads,
// one slot per read task, and what the plugins hand on to the later steps.
struct Engine::LoadContext {
  struct SkillScan {
    std::vector<Skill> skills;
    Diagnostics diags;
  };
  struct PlaceScan {
    SkillPlace place;
    Diagnostics diags;
  };

  LoadContext(Engine& engine, const Options& opts) : e(engine), options(opts), diags(engine.diags_) {}

  Engine& e;
  const Options& options;
  Diagnostics& diags;  // the engine's, in the order reported

  // Inputs (gather_sources).
  fs::path private_dir;
  std::vector<fs::path> plugin_dirs;
  std::set<std::string> disabled;  // plugins.disabled
  std::vector<fs::path> hook_files;
  Diagnostics hook_diags;  // hooks::load_hooks' diagnostics, in its order

  // The read tasks' slots (read_files).
  SkillScan builtin;
  // The watched places, in the seed's order: private, ~/.agents/skills, ~/.claude/skills.
  PlaceScan priv, home_agents, home_claude;
  std::vector<McpServerConfig> user_servers;
  Diagnostics mcp_diags, agent_diags, executor_diags;
  std::vector<PluginRead> plugin_reads;
  std::vector<hooks::HookSet> file_hooks;
  std::vector<Diagnostics> file_hook_diags;

  // From the plugins (merge_plugins), for the hooks, MCP servers and skills.
  std::set<std::string> user_ids;  // mcp_servers/<id>.yaml, which win over a plugin's
  std::vector<Skill> plugin_skills;
  std::vector<McpServerConfig> plugin_servers;
  std::map<std::string, std::string> plugin_server_owner;  // MCP id -> the plugin declaring it
  std::set<std::string> disabled_seen;
  std::vector<PluginRead*> with_hooks;

  void load_main_config();
  void gather_sources();
  void read_files();
  void merge_mcp_files();
  void merge_plugins();
  void merge_hooks();
  void merge_mcp_servers();
  void merge_skills();
  void check_executors();
  void check_agents();
  void choose_default_agent();

 private:
  std::vector<std::function<void()>> read_tasks();
  void refuse_taken_name(const PluginRead& r, const fs::path& dir, const fs::path& keeper);
  void list_disabled(const PluginRead& r, const fs::path& dir);
  void merge_enabled(PluginRead& r);
  void warn_unknown_disabled();
  void merge_hook_diagnostic(Diagnostic d, const std::set<std::string>& manifests);
  std::string executor_names() const;
};

std::shared_ptr<const Engine> Engine::load(const Options& options, Diagnostics& out_diags) {
  std::shared_ptr<Engine> e(new Engine());
  e->options_ = options;
  LoadContext ctx(*e, options);
  ctx.load_main_config();
  ctx.gather_sources();
  ctx.read_files();
  ctx.merge_mcp_files();
  ctx.merge_plugins();
  ctx.merge_hooks();
  ctx.merge_mcp_servers();
  ctx.merge_skills();
  ctx.check_executors();
  ctx.check_agents();
  ctx.choose_default_agent();
  append(out_diags, e->diags_);
  return e;
}

// config.yaml: its errors fail the load (on reload the previous configuration stays).
void Engine::LoadContext::load_main_config() {
  e.main_ = config::load_main_config(options.config_root, diags);
  if (config::has_errors(diags)) e.failed_ = true;
}

// What the read tasks read: the private skill folder, the plugin folders, hooks/*.yaml.
void Engine::LoadContext::gather_sources() {
  private_dir = e.main_.skills_directory ? expand_home(*e.main_.skills_directory, options.home)
                                         : options.config_root / "skills";
  if (private_dir.is_relative()) private_dir = options.config_root / private_dir;
  plugin_dirs = list_plugin_dirs(options);
  disabled = std::set<std::string>(e.main_.plugins_disabled.begin(), e.main_.plugins_disabled.end());
  if (options.extensions) hook_files = hooks::list_hook_files(options.config_root, hook_diags);
  plugin_reads.resize(plugin_dirs.size());
  file_hooks.resize(hook_files.size());
  file_hook_diags.resize(hook_files.size());
}

// One task per file or folder tree, each writing only its own slot.
std::vector<std::function<void()>> Engine::LoadContext::read_tasks() {
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
  tasks.push_back([&] { e.agents_ = detail::load_agent_files(options.config_root, agent_diags); });
  tasks.push_back([&] { e.executors_ = detail::load_executor_files(options.config_root, options.home, executor_diags); });
  for (std::size_t i = 0; i < plugin_dirs.size(); ++i)
    tasks.push_back([&, i] { plugin_reads[i] = read_plugin(plugin_dirs[i], disabled, options); });
  for (std::size_t i = 0; i < hook_files.size(); ++i)
    tasks.push_back([&, i] { hooks::load_hook_file(hook_files[i], file_hooks[i], file_hook_diags[i]); });
  return tasks;
}

void Engine::LoadContext::read_files() {
  const auto tasks = read_tasks();
  detail::parallel_for(tasks.size(), [&](std::size_t i) { tasks[i](); });
}

// MCP server files.
void Engine::LoadContext::merge_mcp_files() {
  append(diags, mcp_diags);
  for (const auto& s : user_servers) user_ids.insert(s.id);
}

// Plugins, in folder-name order.
void Engine::LoadContext::merge_plugins() {
  const std::vector<fs::path> taken = names_taken(plugin_dirs, plugin_reads);
  for (std::size_t i = 0; i < plugin_dirs.size(); ++i) {
    PluginRead& r = plugin_reads[i];
    if (!r.has_manifest) continue;  // no manifest: skipped
    if (!taken[i].empty())
      refuse_taken_name(r, plugin_dirs[i], taken[i]);
    else if (r.disabled)
      list_disabled(r, plugin_dirs[i]);
    else
      merge_enabled(r);
  }
  warn_unknown_disabled();
  std::stable_sort(with_hooks.begin(), with_hooks.end(), [](const PluginRead* a, const PluginRead* b) {
    return a->lp.hooks->plugin_name < b->lp.hooks->plugin_name;
  });
  std::sort(e.plugins_.begin(), e.plugins_.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
}

// Refused: one name must mean one plugin (its skills, hooks, `plugin disable`, its copy on an executor).
void Engine::LoadContext::refuse_taken_name(const PluginRead& r, const fs::path& dir, const fs::path& keeper) {
  const detail::LoadedPlugin& lp = r.lp;
  diags.push_back({Severity::Error, lp.info.manifest.string(), 0,
                   "plugin name '" + lp.info.name + "' is taken by the plugin in " + keeper.string() +
                       "; the plugin in " + dir.string() +
                       " is not loaded (give it another name, or remove or disable one)"});
  e.failed_ = true;
}

void Engine::LoadContext::list_disabled(const PluginRead& r, const fs::path& dir) {
  PluginInfo info = r.lp.info;
  info.enabled = false;
  info.mcp_server_ids.clear();
  disabled_seen.insert(dir.filename().string());
  disabled_seen.insert(info.name);
  e.plugins_.push_back(std::move(info));
}

// An enabled plugin's diagnostics, skills, MCP servers (an id of mcp_servers/ wins; one claimed by
// two plugins fails the load) and hooks.
void Engine::LoadContext::merge_enabled(PluginRead& r) {
  detail::LoadedPlugin& lp = r.lp;
  append(diags, r.diags);
  if (lp.fatal) e.failed_ = true;
  for (auto& s : lp.skills) plugin_skills.push_back(std::move(s));
  for (auto& s : lp.mcp_servers) {
    if (user_ids.count(s.id)) continue;  // mcp_servers/<id>.yaml wins
    if (auto it = plugin_server_owner.find(s.id); it != plugin_server_owner.end()) {
      diags.push_back({Severity::Error, s.source_file.string(), s.source_line,
                       "MCP server id '" + s.id + "' is also declared by the enabled plugin '" + it->second +
                           "'; two enabled plugins cannot declare the same id (disable one, or put a file " + s.id +
                           ".yaml in mcp_servers/)"});
      e.failed_ = true;
      continue;
    }
    plugin_server_owner[s.id] = lp.info.name;
    lp.info.mcp_server_ids.push_back(s.id);
    plugin_servers.push_back(std::move(s));
  }
  if (lp.hooks) with_hooks.push_back(&r);
  e.plugins_.push_back(std::move(lp.info));
}

void Engine::LoadContext::warn_unknown_disabled() {
  for (const auto& d : e.main_.plugins_disabled)
    if (options.extensions && !disabled_seen.count(d))
      diags.push_back({Severity::Warning, e.main_.file.string(), line_of_key_in_file(e.main_.file, "plugins"),
                       "plugins.disabled names '" + d + "', which is not an installed plugin"});
}

// Hooks, as hooks::load_hooks would return them: hooks/*.yaml in file order, then the plugins'
// sections by plugin name. A problem in a plugin's `hooks:` section is a problem of its manifest.
void Engine::LoadContext::merge_hooks() {
  auto take = [&](hooks::HookSet& set, Diagnostics& d) {
    for (auto& h : set.hooks) e.hooks_.hooks.push_back(std::move(h));
    append(hook_diags, d);
  };
  for (std::size_t i = 0; i < hook_files.size(); ++i) take(file_hooks[i], file_hook_diags[i]);
  for (PluginRead* r : with_hooks) {
    take(r->hooks, r->hook_diags);
    e.hook_sources_.push_back(std::move(*r->lp.hooks));
  }
  std::set<std::string> manifests;
  for (const auto& h : e.hook_sources_) manifests.insert(h.manifest_file.string());
  for (auto& d : hook_diags) merge_hook_diagnostic(std::move(d), manifests);
}

void Engine::LoadContext::merge_hook_diagnostic(Diagnostic d, const std::set<std::string>& manifests) {
  // The plugin loader already reported escaping script paths at this line: keep one message.
  bool dup = manifests.count(d.path) && std::any_of(diags.begin(), diags.end(), [&](const Diagnostic& x) {
    return x.path == d.path && x.line == d.line && x.severity == d.severity;
  });
  if (dup) return;
  if (d.severity == Severity::Error) {
    // A hook that does not load would silently stop guarding: the whole load fails.
    e.failed_ = true;
    if (manifests.count(d.path))
      for (auto& p : e.plugins_)
        if (p.manifest.string() == d.path) p.valid = false;
  }
  diags.push_back(std::move(d));
}

// mcp_servers/*.yaml, then the enabled plugins' servers.
void Engine::LoadContext::merge_mcp_servers() {
  e.mcp_servers_ = std::move(user_servers);
  for (auto& s : plugin_servers) e.mcp_servers_.push_back(std::move(s));
}

// Places 3-7 in order: private, built-in, plugins, ~/.agents/skills, ~/.claude/skills. The private
// folder's and the built-in skill's problems come first; in ~/.agents/skills and ~/.claude/skills
// malformed ones are skipped.
void Engine::LoadContext::merge_skills() {
  for (auto* part : {&builtin.skills, &plugin_skills})
    for (auto& sk : *part) e.fixed_skills_.push_back(std::make_shared<const Skill>(std::move(sk)));
  if (options.skills && options.extensions)
    for (auto* scan : {&priv, &home_agents, &home_claude}) e.skill_places_.push_back(std::move(scan->place));
  e.compose_user_skills();
  diags.insert(diags.begin(), builtin.diags.begin(), builtin.diags.end());
  diags.insert(diags.begin(), priv.diags.begin(), priv.diags.end());
  append(diags, home_agents.diags);
  append(diags, home_claude.diags);
}

std::string Engine::LoadContext::executor_names() const {
  std::string names = "local, openvaala";
  for (const auto& [id, _] : e.executors_) names += ", " + id;
  return names;
}

// Executors, then who names them: default_executor here, an agent's `executor:` in check_agents.
void Engine::LoadContext::check_executors() {
  append(diags, executor_diags);
  if (e.main_.default_executor && !e.has_executor(*e.main_.default_executor))
    diags.push_back({Severity::Error, e.main_.file.string(), line_of_key_in_file(e.main_.file, "default_executor"),
                     "default_executor '" + *e.main_.default_executor + "' is not an executor (available: " +
                         executor_names() + ")"});
}

// Agents: each one's executor and MCP servers must exist.
void Engine::LoadContext::check_agents() {
  append(diags, agent_diags);
  for (const auto& [name, a] : e.agents_)
    if (a.executor && !e.has_executor(*a.executor))
      diags.push_back({Severity::Error, a.file.string(), line_of_key_in_file(a.file, "executor"),
                       "executor '" + *a.executor + "' is not an executor (available: " + executor_names() + ")"});
  std::set<std::string> all_ids;
  for (const auto& s : e.mcp_servers_) all_ids.insert(s.id);
  for (const auto& [name, a] : e.agents_) {
    if (!a.mcp_servers || !options.extensions) continue;  // the settings alone have no MCP servers
    for (const auto& id : *a.mcp_servers)
      if (!all_ids.count(id))
        diags.push_back({Severity::Error, a.file.string(), line_of_key_in_file(a.file, "mcp_servers"),
                         "mcp_servers names '" + id + "', which is not a configured MCP server"});
  }
}

// The built-in "default" agent unless agents/ has one; default_agent must name an agent.
void Engine::LoadContext::choose_default_agent() {
  if (!e.agents_.count("default")) {
    Agent d;
    d.name = "default";
    d.description = "All skills and MCP servers";
    e.agents_["default"] = std::move(d);
  }
  e.default_agent_ = "default";
  if (!e.main_.default_agent) return;
  if (e.agents_.count(*e.main_.default_agent)) {
    e.default_agent_ = *e.main_.default_agent;
    return;
  }
  std::string names;
  for (const auto& [n, _] : e.agents_) names += (names.empty() ? "" : ", ") + n;
  diags.push_back({Severity::Error, e.main_.file.string(), line_of_key_in_file(e.main_.file, "default_agent"),
                   "default_agent '" + *e.main_.default_agent + "' is not an agent in agents/ (available: " + names +
                       ")"});
}

}  // namespace runtime::engine
