// Plugin folders: finding the manifest, the OpenVaala (.openvaala-plugin/plugin.yaml), Codex and
// Claude (plugin.json) formats, the JSON manifest helpers, and loading one plugin. The Agent
// Plugins 1.0 layout is in agent_plugins.cpp.
#include <algorithm>
#include <boost/json.hpp>
#include <regex>
#include <set>

#include "runtime/engine/loaders.hpp"
#include "support/file_io.hpp"
#include "runtime/engine/names.hpp"
#include "runtime/engine/paths.hpp"
#include "runtime/engine/text_lines.hpp"

namespace runtime::engine {

std::string_view format_name(PluginInfo::Format f) {
  switch (f) {
    case PluginInfo::Format::OpenVaala: return "openvaala";
    case PluginInfo::Format::Codex: return "codex";
    case PluginInfo::Format::Claude: return "claude";
    case PluginInfo::Format::AgentPlugins: return "agent-plugins";
  }
  return "openvaala";
}

namespace detail {

namespace json = boost::json;
using Severity = Diagnostic::Severity;

std::optional<json::value> parse_json(const std::string& text, const fs::path& file, Severity sev, Diagnostics& diags) {
  json::stream_parser p;
  boost::system::error_code ec;
  std::size_t n = p.write(text.data(), text.size(), ec);
  if (!ec) p.finish(ec);
  if (ec) {
    diags.push_back({sev, file.string(), line_at_offset(text, n), "invalid JSON: " + ec.message()});
    return std::nullopt;
  }
  return p.release();
}

std::optional<JsonManifest> read_json_manifest(LoadedPlugin& lp, const fs::path& manifest, const char* not_an_object,
                                               Diagnostics& diags) {
  auto fail = [&](int line, const std::string& msg) -> std::optional<JsonManifest> {
    if (!msg.empty()) diags.push_back({Severity::Error, manifest.string(), line, msg});
    lp.fatal = true;
    return std::nullopt;
  };
  auto text = support::read_file(manifest);
  if (!text) return fail(0, "cannot be read");
  auto v = parse_json(*text, manifest, Severity::Error, diags);
  if (!v) return fail(0, "");  // parse_json reported it
  if (!v->is_object()) return fail(1, not_an_object);
  return JsonManifest{std::move(*text), std::move(v->as_object())};
}

void JsonManifestCheck::fail(int line, const std::string& msg) {
  diags.push_back({Severity::Error, manifest.string(), line, msg});
  lp.fatal = true;
}

int JsonManifestCheck::line(std::string_view key) const { return json_key_line(text, key); }

std::string json_type_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::string: return "a string";
    case json::kind::object: return "an object";
    case json::kind::array: return "an array";
    case json::kind::bool_: return "a boolean";
    case json::kind::null: return "null";
    default: return "a number";
  }
}

std::optional<fs::path> inside_plugin(const fs::path& root, const std::string& rel) {
  fs::path p(rel);
  if (p.is_absolute() || rel.rfind("~", 0) == 0) return std::nullopt;
  fs::path abs = (root / p).lexically_normal();
  if (!path_within(root, abs)) return std::nullopt;
  return abs;
}

namespace {

// A path holding SKILL.md is one skill; otherwise a folder of skills (searched recursively).
void skills_from_path(const fs::path& p, const std::string& plugin, const Engine::Options& options,
                      std::vector<Skill>& out, Diagnostics& diags) {
  if (!options.skills || !is_dir(p)) return;
  find_skills(p, SkillSource::Plugin, plugin, Severity::Warning, out, diags);
}

// ---- the `hooks:` section: `script` paths must be relative paths inside the plugin.
int check_plugin_hooks(config::YamlReader& r, const YAML::Node& hooks, const fs::path& root) {
  if (!r.expect_map(hooks, "'hooks'")) return 0;
  int events = 0;
  for (const auto& ev : hooks) {
    ++events;
    if (!ev.second.IsSequence()) continue;  // the hook loader reports the shape
    for (const auto& group : ev.second) {
      if (!group.IsMap() || !group["hooks"] || !group["hooks"].IsSequence()) continue;
      for (const auto& h : group["hooks"]) {
        if (!h.IsMap() || !h["script"] || !h["script"].IsScalar()) continue;
        const std::string script = h["script"].Scalar();
        fs::path sp(script);
        if (sp.is_absolute() || script.rfind("~", 0) == 0)
          r.error(h["script"], "script '" + script +
                                   "' must be a relative path inside the plugin (like ./hooks/check.sh), not an "
                                   "absolute or ~/ path");
        else if (!inside_plugin(root, script))
          r.error(h["script"], "script '" + script + "' points outside the plugin folder");
      }
    }
  }
  return events;
}

// ---- OpenVaala native manifest

// `name`: required, kebab-case, not "skill", and the plugin's folder name.
void check_openvaala_name(config::YamlReader& r, YAML::Node root, const std::optional<std::string>& name,
                          const std::string& dir_name) {
  if (!name) {
    r.error(root, "'name' is required and must be the plugin's folder name ('" + dir_name + "')");
  } else if (*name == "skill") {
    r.error(root["name"], "'skill' is a reserved name (it would clash with /skill:<name>)");
  } else if (!is_kebab_name(*name)) {
    r.error(root["name"], "name '" + *name + "' is invalid: use lowercase letters, digits and single hyphens");
  } else if (*name != dir_name) {
    r.error(root["name"], "name '" + *name + "' must match the plugin's folder name '" + dir_name + "'");
  }
}

// `mcp_servers:`: a list of entries as in mcp_servers/<id>.yaml, each id once.
void load_openvaala_mcp(config::YamlReader& r, const YAML::Node& m, LoadedPlugin& lp, const fs::path& dir,
                        const Engine::Options& options) {
  if (!m.IsSequence()) return r.error(m, "'mcp_servers' must be a list of servers (each with id and type)");
  std::set<std::string> seen;
  McpParseContext ctx;
  ctx.config_root = options.config_root;
  ctx.plugin = lp.info.name;
  ctx.plugin_root = dir;
  for (const auto& entry : m) {
    auto c = parse_mcp_server(r, entry, ctx);
    if (!c) continue;
    if (!seen.insert(c->id).second) {
      r.error(entry["id"], "MCP server id '" + c->id + "' is declared twice in this plugin");
      continue;
    }
    lp.mcp_servers.push_back(std::move(*c));
  }
}

// The manifest's fields, hooks and MCP servers; the skill folder it names (default ./skills).
fs::path read_openvaala_manifest(config::YamlReader& r, YAML::Node root, LoadedPlugin& lp, const fs::path& dir,
                                 const fs::path& manifest, const Engine::Options& options) {
  const std::string dir_name = dir.filename().string();
  r.check_keys(root, {"name", "version", "description", "skills", "hooks", "mcp_servers"}, "plugin.yaml");
  auto name = r.string(root, "name");
  check_openvaala_name(r, root, name, dir_name);
  lp.info.name = name.value_or(dir_name);
  lp.info.version = r.string(root, "version").value_or("");
  lp.info.description = r.string(root, "description").value_or("");

  fs::path skills_dir = dir / "skills";
  if (auto s = r.string(root, "skills")) {
    if (auto abs = inside_plugin(dir, *s)) skills_dir = *abs;
    else r.error(root["skills"], "skills '" + *s + "' must be a relative path inside the plugin folder");
  }
  if (auto h = root["hooks"]; h && !h.IsNull()) {
    lp.info.hook_events = check_plugin_hooks(r, h, dir);
    // The node itself, not a clone: it keeps its line marks, so the hook loader need not read
    // the manifest a second time to report lines.
    lp.hooks = hooks::PluginHookSource{lp.info.name, dir, manifest, h};
  }
  if (auto m = root["mcp_servers"]; m && !m.IsNull()) load_openvaala_mcp(r, m, lp, dir, options);
  return skills_dir;
}

void load_openvaala(LoadedPlugin& lp, const fs::path& dir, const fs::path& manifest, const Engine::Options& options,
                    Diagnostics& diags) {
  const auto before = diags.size();
  config::YamlReader r(manifest, diags);
  auto root = r.load();
  // Any error in the manifest makes the plugin fail.
  auto finish = [&] {
    for (auto i = before; i < diags.size(); ++i)
      if (diags[i].severity == Severity::Error) lp.fatal = true;
  };
  if (!root) return finish();
  if (root->IsNull()) {
    r.error_line(0, "the manifest is empty: 'name' is required");
    return finish();
  }
  if (!r.expect_map(*root, "plugin.yaml")) return finish();
  const fs::path skills_dir = read_openvaala_manifest(r, *root, lp, dir, manifest, options);
  finish();
  if (!lp.fatal) skills_from_path(skills_dir, lp.info.name, options, lp.skills, diags);
}

// ---- Codex / Claude manifests: name, version, description and skills only.

// A Codex or Claude plugin.json being read. Every error is reported and fails the plugin.
struct VendorManifest : JsonManifestCheck {
  std::optional<std::string> str(const char* key) {
    auto* f = o.if_contains(key);
    if (!f || f->is_null()) return std::nullopt;
    if (!f->is_string()) {
      fail(line(key), std::string("'") + key + "' must be a string, not " + json_type_name(*f));
      return std::nullopt;
    }
    return std::string(f->as_string());
  }

  // `name` (the folder's name when missing): kebab-case and not "skill"; another name than the
  // folder's is only a warning.
  void read_name(const std::string& dir_name) {
    auto name = str("name").value_or("");
    if (name.empty()) name = dir_name;
    if (name == "skill") fail(line("name"), "'skill' is a reserved plugin name");
    else if (!is_kebab_name(name))
      fail(line("name"),
           "name '" + name + "' is invalid: use lowercase letters, digits and single hyphens");
    else if (name != dir_name)
      diags.push_back({Severity::Warning, manifest.string(), line("name"),
                       "name '" + name + "' differs from the folder name '" + dir_name + "'"});
    lp.info.name = name;
  }

  // `skills`: a path or a list of paths.
  std::vector<std::string> skill_paths() {
    std::vector<std::string> extra;
    auto* s = o.if_contains("skills");
    if (!s || s->is_null()) return extra;
    if (s->is_string()) {
      extra.push_back(std::string(s->as_string()));
    } else if (s->is_array()) {
      for (const auto& e : s->as_array()) {
        if (!e.is_string()) {
          fail(line("skills"), "'skills' must be a path or a list of paths (strings)");
          break;
        }
        extra.push_back(std::string(e.as_string()));
      }
    } else {
      fail(line("skills"), "'skills' must be a path or a list of paths, not " + json_type_name(*s));
    }
    return extra;
  }

  // The default ./skills/ first, then each listed path (a folder of skills or one skill's folder).
  void load_skills(const fs::path& dir, const std::vector<std::string>& extra, const Engine::Options& options) {
    std::set<fs::path> done;
    fs::path def = dir / "skills";
    skills_from_path(def, lp.info.name, options, lp.skills, diags);
    done.insert(def.lexically_normal());
    for (const auto& rel : extra) {
      auto abs = inside_plugin(dir, rel);
      if (!abs) {
        diags.push_back({Severity::Warning, manifest.string(), line("skills"),
                         "skills path '" + rel + "' is outside the plugin folder; ignored"});
        continue;
      }
      fs::path norm = *abs;
      if (!norm.empty() && norm.filename().empty()) norm = norm.parent_path();
      if (!done.insert(norm).second) continue;
      skills_from_path(norm, lp.info.name, options, lp.skills, diags);
    }
  }
};

void load_vendor_json(LoadedPlugin& lp, const fs::path& dir, const fs::path& manifest, const Engine::Options& options,
                      Diagnostics& diags) {
  auto m = read_json_manifest(lp, manifest, "the manifest must be a JSON object", diags);
  if (!m) return;
  VendorManifest v{{lp, manifest, m->text, m->object, diags}};
  v.read_name(dir.filename().string());
  lp.info.version = v.str("version").value_or("");
  lp.info.description = v.str("description").value_or("");
  const std::vector<std::string> extra = v.skill_paths();
  if (lp.fatal) return;
  v.load_skills(dir, extra, options);
}

}  // namespace

std::optional<std::pair<PluginInfo::Format, fs::path>> detect_manifest(const fs::path& dir) {
  const std::pair<PluginInfo::Format, const char*> order[] = {
      {PluginInfo::Format::OpenVaala, ".openvaala-plugin/plugin.yaml"},
      {PluginInfo::Format::Codex, ".codex-plugin/plugin.json"},
      {PluginInfo::Format::Claude, ".claude-plugin/plugin.json"},
      {PluginInfo::Format::AgentPlugins, "plugin.json"},
  };
  for (const auto& [f, rel] : order) {
    fs::path p = dir / rel;
    if (fs::exists(fs::symlink_status(p))) return std::pair{f, p};
  }
  return std::nullopt;
}

std::optional<InstallRecord> read_install_record(const fs::path& dir) {
  fs::path p = dir / ".openvaala-install.yaml";
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  try {
    auto n = YAML::LoadFile(p.string());
    if (!n.IsMap()) return std::nullopt;
    InstallRecord r;
    auto get = [&](const char* k) { return n[k] && n[k].IsScalar() ? n[k].Scalar() : std::string(); };
    r.source = get("source");
    r.ref = get("ref");
    r.path = get("path");
    r.commit = get("commit");
    return r;
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

std::string plugin_declared_name(const fs::path& dir) {
  auto m = detect_manifest(dir);
  std::string fallback = dir.filename().string();
  if (!m) return fallback;
  try {
    if (m->first == PluginInfo::Format::OpenVaala) {
      auto n = YAML::LoadFile(m->second.string());
      if (n.IsMap() && n["name"] && n["name"].IsScalar() && !n["name"].Scalar().empty()) return n["name"].Scalar();
      return fallback;
    }
    auto text = support::read_file(m->second);
    if (!text) return fallback;
    boost::system::error_code ec;
    auto v = json::parse(*text, ec);
    if (ec || !v.is_object()) return fallback;
    auto* name = v.as_object().if_contains("name");
    if (name && name->is_string() && !name->as_string().empty()) return std::string(name->as_string());
  } catch (const std::exception&) {
  }
  return fallback;
}

LoadedPlugin load_plugin(const fs::path& dir, const Engine::Options& options, Diagnostics& diags) {
  LoadedPlugin lp;
  lp.info.root = dir;
  lp.info.name = dir.filename().string();
  lp.info.install = read_install_record(dir);
  auto m = detect_manifest(dir);
  if (!m) return lp;
  lp.info.format = m->first;
  lp.info.manifest = m->second;
  switch (m->first) {
    case PluginInfo::Format::OpenVaala: load_openvaala(lp, dir, m->second, options, diags); break;
    case PluginInfo::Format::Codex:
    case PluginInfo::Format::Claude: load_vendor_json(lp, dir, m->second, options, diags); break;
    case PluginInfo::Format::AgentPlugins: load_agent_plugins(lp, dir, m->second, options, diags); break;
  }
  lp.info.valid = !lp.fatal;
  if (lp.fatal) {
    lp.skills.clear();
    lp.mcp_servers.clear();
    lp.hooks.reset();
  }
  // Several skills with one name in a plugin: the first wins.
  std::set<std::string> names;
  std::vector<Skill> unique;
  for (auto& s : lp.skills)
    if (names.insert(s.name).second) unique.push_back(std::move(s));
  lp.skills = std::move(unique);
  for (const auto& s : lp.skills) lp.info.skill_names.push_back(s.name);
  return lp;
}

}  // namespace detail
}  // namespace runtime::engine
