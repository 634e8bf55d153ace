#include "runtime/engine/engine.hpp"

#include <algorithm>
#include <fstream>
#include <future>
#include <set>
#include <unistd.h>

#include "runtime/config/paths.hpp"
#include "runtime/engine/loaders.hpp"
#include "runtime/engine/util.hpp"

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
  auto current = read_file(file);
  if (!current || *current != text) {
    std::error_code ec;
    fs::create_directories(skill_dir, ec);
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
  auto text = read_file(file);
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
  // The user-level skill folders are searched on a second thread while plugins and hooks load
  // (the results are merged in the seed's order below, so the outcome does not depend on timing).
  struct Scan {
    std::vector<Skill> priv, home_agents, home_claude;
    Diagnostics priv_diags, home_diags;
  };
  auto scan = std::async(std::launch::async, [private_dir, home = options.home] {
    Scan s;
    detail::find_skills(private_dir, SkillSource::Private, "", Severity::Error, s.priv, s.priv_diags);
    detail::find_skills(home / ".agents" / "skills", SkillSource::HomeAgents, "", Severity::Warning, s.home_agents,
                        s.home_diags);
    detail::find_skills(home / ".claude" / "skills", SkillSource::HomeClaude, "", Severity::Warning, s.home_claude,
                        s.home_diags);
    return s;
  });
  std::vector<Skill> builtin;
  Diagnostics builtin_diags;
  if (!options.builtin_skills_dir.empty()) materialize_builtin(options.builtin_skills_dir, builtin, builtin_diags);
  std::vector<Skill> plugin_skills;

  // MCP server files.
  auto user_servers = detail::load_mcp_server_files(options.config_root, diags);
  std::set<std::string> user_ids;
  for (const auto& s : user_servers) user_ids.insert(s.id);

  // Plugins.
  std::set<std::string> disabled(e->main_.plugins_disabled.begin(), e->main_.plugins_disabled.end());
  std::set<std::string> disabled_seen;
  std::vector<McpServerConfig> plugin_servers;
  std::map<std::string, std::string> plugin_server_owner;
  fs::path plugins_dir = options.config_root / "plugins";
  std::vector<fs::path> plugin_dirs;
  std::error_code ec;
  for (fs::directory_iterator it(plugins_dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    std::error_code ec2;
    if (name.empty() || name[0] == '.' || !it->is_directory(ec2)) continue;
    if (!detail::detect_manifest(it->path())) continue;  // no manifest: skipped
    plugin_dirs.push_back(it->path());
  }
  std::sort(plugin_dirs.begin(), plugin_dirs.end());
  for (const auto& dir : plugin_dirs) {
    const std::string dir_name = dir.filename().string();
    bool is_disabled = disabled.count(dir_name) > 0;
    std::string declared;
    if (!is_disabled && !disabled.empty()) {
      declared = detail::plugin_declared_name(dir);
      is_disabled = disabled.count(declared) > 0;
    }
    if (is_disabled) {
      // Disabled plugins are listed but not validated: a broken plugin can always be disabled.
      PluginInfo info;
      Diagnostics ignored;
      auto lp = detail::load_plugin(dir, options, ignored);
      info = lp.info;
      info.enabled = false;
      info.mcp_server_ids.clear();
      disabled_seen.insert(dir_name);
      disabled_seen.insert(info.name);
      e->plugins_.push_back(std::move(info));
      continue;
    }
    auto lp = detail::load_plugin(dir, options, diags);
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
    if (lp.hooks) e->hook_sources_.push_back(std::move(*lp.hooks));
    e->plugins_.push_back(std::move(lp.info));
  }
  for (const auto& d : e->main_.plugins_disabled)
    if (!disabled_seen.count(d))
      diags.push_back({Severity::Warning, e->main_.file.string(), line_of_key_in_file(e->main_.file, "plugins"),
                       "plugins.disabled names '" + d + "', which is not an installed plugin"});
  std::sort(e->hook_sources_.begin(), e->hook_sources_.end(),
            [](const auto& a, const auto& b) { return a.plugin_name < b.plugin_name; });
  std::sort(e->plugins_.begin(), e->plugins_.end(), [](const auto& a, const auto& b) { return a.name < b.name; });

  {
    // Hooks: a problem in a plugin's `hooks:` section is a problem of its manifest.
    Diagnostics hook_diags;
    e->hooks_ = hooks::load_hooks(options.config_root, e->hook_sources_, hook_diags);
    std::set<std::string> manifests;
    for (const auto& h : e->hook_sources_) manifests.insert(h.manifest_file.string());
    for (auto& d : hook_diags) {
      // The plugin loader already reported escaping script paths at this line: keep one message.
      bool dup = manifests.count(d.path) && std::any_of(diags.begin(), diags.end(), [&](const Diagnostic& x) {
        return x.path == d.path && x.line == d.line && x.severity == d.severity;
      });
      if (dup) continue;
      if (d.severity == Severity::Error && manifests.count(d.path)) {
        e->failed_ = true;
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
  Scan scanned = scan.get();
  for (auto* part : {&scanned.priv, &builtin, &plugin_skills, &scanned.home_agents, &scanned.home_claude})
    for (auto& sk : *part) e->user_skills_.push_back(std::move(sk));
  diags.insert(diags.begin(), builtin_diags.begin(), builtin_diags.end());
  diags.insert(diags.begin(), scanned.priv_diags.begin(), scanned.priv_diags.end());
  diags.insert(diags.end(), scanned.home_diags.begin(), scanned.home_diags.end());

  // Agents.
  e->agents_ = detail::load_agent_files(options.config_root, diags);
  std::set<std::string> all_ids;
  for (const auto& s : e->mcp_servers_) all_ids.insert(s.id);
  for (const auto& [name, a] : e->agents_) {
    if (!a.mcp_servers) continue;
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

const Agent* Engine::find_agent(std::string_view name) const {
  auto it = agents_.find(std::string(name));
  return it == agents_.end() ? nullptr : &it->second;
}

const PluginInfo* Engine::find_plugin(std::string_view name) const {
  for (const auto& p : plugins_)
    if (p.name == name || p.root.filename() == name) return &p;
  return nullptr;
}

json::object Engine::agent_config_option(std::string_view current) const {
  json::array options;
  for (const auto& [name, a] : agents_) {
    json::object o{{"value", name}, {"name", name}};
    if (!a.description.empty()) o["description"] = a.description;
    options.push_back(std::move(o));
  }
  std::string cur = agents_.count(std::string(current)) ? std::string(current) : default_agent_;
  return json::object{{"id", "agent"},
                      {"name", "Agent"},
                      {"description", "Which agent (instructions, skills and MCP servers) this session uses"},
                      {"type", "select"},
                      {"currentValue", cur},
                      {"options", std::move(options)}};
}

json::object Engine::agent_modes(std::string_view current) const {
  json::array modes;
  for (const auto& [name, a] : agents_) {
    json::object o{{"id", name}, {"name", name}};
    if (!a.description.empty()) o["description"] = a.description;
    modes.push_back(std::move(o));
  }
  std::string cur = agents_.count(std::string(current)) ? std::string(current) : default_agent_;
  return json::object{{"currentModeId", cur}, {"availableModes", std::move(modes)}};
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

SessionView Engine::session_view(const fs::path& cwd_in, std::string_view agent_name) const {
  SessionView v;
  v.cwd = cwd_in.lexically_normal();
  if (!v.cwd.empty() && v.cwd.filename().empty()) v.cwd = v.cwd.parent_path();
  v.git_root = find_git_root(v.cwd);
  const Agent* a = find_agent(agent_name.empty() ? std::string_view(default_agent_) : agent_name);
  if (!a) a = find_agent(default_agent_);
  v.agent = *a;

  std::vector<Skill> found;
  detail::find_skills(v.cwd / ".agents" / "skills", SkillSource::ProjectAgents, "", Severity::Warning, found,
                      v.diagnostics);
  detail::find_skills(v.cwd / ".claude" / "skills", SkillSource::ProjectClaude, "", Severity::Warning, found,
                      v.diagnostics);
  found.insert(found.end(), user_skills_.begin(), user_skills_.end());
  std::set<std::string> taken;
  for (auto& s : found) {
    if (!taken.insert(s.name).second) {
      v.shadowed.push_back(std::move(s));
      continue;
    }
    if (v.agent.skills &&
        std::find(v.agent.skills->begin(), v.agent.skills->end(), s.name) == v.agent.skills->end()) {
      v.not_for_agent.push_back(std::move(s));
      continue;
    }
    v.skills.push_back(std::move(s));
  }
  v.agents_md = load_agents_md_chain(v.cwd);
  v.mcp_servers = mcp_servers_for(v.agent);
  return v;
}

// ---------------------------------------------------------------------------------------------

const Skill* SessionView::find_skill(std::string_view name) const {
  for (const auto& s : skills)
    if (s.name == name) return &s;
  return nullptr;
}

json::array SessionView::available_commands() const {
  json::array out;
  for (const auto& s : skills)
    out.push_back(json::object{{"name", s.name},
                               {"description", s.description},
                               {"input", json::object{{"hint", "what you want done with this skill (optional)"}}}});
  return out;
}

std::string SessionView::skills_prompt() const {
  if (skills.empty()) return {};
  std::string s =
      "# Skills\n"
      "Skills are folders of instructions for particular tasks. Each line gives a skill's name, when to use it, and "
      "its SKILL.md file. When a task matches a skill's description, read that SKILL.md in full with read_file "
      "before you start, and follow it; paths it mentions are relative to the skill's folder. When the user's "
      "message already contains a skill, do not read it again.\n\n";
  for (const auto& sk : skills) s += "- " + sk.name + ": " + sk.description + " (file: " + sk.file.string() + ")\n";
  return s;
}

std::string SessionView::instructions_prompt() const {
  if (trim(agent.instructions).empty()) return {};
  std::string s = "# Instructions\n" + agent.instructions;
  if (s.back() != '\n') s += '\n';
  return s;
}

std::string SessionView::agents_md_prompt() const { return engine::agents_md_prompt(agents_md); }

std::string SessionView::system_prompt_block() const {
  std::string out;
  for (const auto& part : {instructions_prompt(), skills_prompt(), agents_md_prompt()}) {
    if (part.empty()) continue;
    if (!out.empty()) out += '\n';
    out += part;
  }
  return out;
}

SlashExpansion expand_slash_command(const SessionView& view, std::string_view text) {
  SlashExpansion r;
  r.text = std::string(text);
  std::size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
  if (i >= text.size() || text[i] != '/') return r;
  std::size_t end = text.find_first_of(" \t\r\n", i);
  std::string token(text.substr(i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1));
  std::string rest = end == std::string_view::npos ? std::string() : trim(text.substr(end));
  bool explicit_skill = token.rfind("skill:", 0) == 0;
  std::string name = explicit_skill ? token.substr(6) : token;
  if (name.empty()) return r;
  const Skill* s = view.find_skill(name);
  if (!s) {
    if (!explicit_skill) return r;
    r.kind = SlashExpansion::Kind::Refused;
    bool exists = std::any_of(view.not_for_agent.begin(), view.not_for_agent.end(),
                              [&](const Skill& x) { return x.name == name; });
    if (exists) {
      r.error = "The skill '" + name + "' is not available to the agent '" + view.agent.name +
                "' (it is not in the agent's skills list).";
    } else {
      r.error = "There is no skill named '" + name + "' available to the agent '" + view.agent.name + "'.";
    }
    if (!view.skills.empty()) {
      r.error += " Available skills:";
      for (const auto& x : view.skills) r.error += " " + x.name;
      r.error += ".";
    }
    return r;
  }
  auto content = read_file(s->file);
  if (!content || content->size() > kMaxSkillFileBytes) {
    r.kind = SlashExpansion::Kind::Refused;
    r.error = "The skill '" + name + "' cannot be read from " + s->file.string() + ".";
    return r;
  }
  r.kind = SlashExpansion::Kind::Expanded;
  r.skill = s->name;
  std::string out = "The user invoked the skill \"" + s->name + "\" (" + s->file.string() +
                    "). Follow its instructions for this request.\n\n<skill name=\"" + s->name + "\" path=\"" +
                    s->file.string() + "\">\n" + *content;
  if (out.back() != '\n') out += '\n';
  out += "</skill>\n\n";
  if (rest.empty()) out += "The user gave no further request: apply the skill to the current context.";
  else out += "User request: " + rest;
  r.text = std::move(out);
  return r;
}

}  // namespace runtime::engine
