#include "runtime/engine/plugin_manager.hpp"
#include "support/file_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "runtime/engine/loaders.hpp"
#include "runtime/engine/names.hpp"
#include "runtime/engine/paths.hpp"
#include "support/text.hpp"

namespace runtime::engine {

namespace {

using Severity = Diagnostic::Severity;
using support::trim;

bool write_file_atomic(const fs::path& p, const std::string& text) {
  fs::path tmp = p;
  tmp += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    if (!o) return false;
    o << text;
    if (!o) return false;
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

std::string flow_list(const std::vector<std::string>& names) {
  std::string s = "[";
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s + "]";
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string cur;
  std::istringstream in(text);
  while (std::getline(in, cur)) lines.push_back(cur);
  return lines;
}

bool is_blank_or_comment(const std::string& l) {
  auto t = trim(l);
  return t.empty() || t[0] == '#';
}

std::string strip_comment(const std::string& v) {
  auto pos = v.find(" #");
  return trim(pos == std::string::npos ? v : v.substr(0, pos));
}

// Copies a plugin folder (symlinks kept as symlinks), leaving out a top-level .git.
bool copy_plugin_tree(const fs::path& from, const fs::path& to, std::string& error) {
  std::error_code ec;
  fs::create_directories(to, ec);
  if (ec) {
    error = "cannot create " + to.string() + ": " + ec.message();
    return false;
  }
  for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name == ".git" || name == ".openvaala-install.yaml") continue;
    std::error_code e2;
    fs::copy(it->path(), to / name,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing, e2);
    if (e2) {
      error = "cannot copy " + it->path().string() + ": " + e2.message();
      return false;
    }
  }
  if (ec) {
    error = "cannot read " + from.string() + ": " + ec.message();
    return false;
  }
  return true;
}

std::string describe_source(const PluginInfo& p) {
  if (p.install) {
    std::string s = p.install->source;
    if (!p.install->ref.empty()) s += " @" + p.install->ref;
    if (!p.install->path.empty()) s += " --path " + p.install->path;
    if (!p.install->commit.empty()) s += " (" + p.install->commit.substr(0, 12) + ")";
    return s;
  }
  std::error_code ec;
  if (fs::is_symlink(p.root, ec)) return "link to " + fs::read_symlink(p.root, ec).string();
  return "copied into " + p.root.string();
}

bool looks_like_git_url(const std::string& s) {
  return s.find("://") != std::string::npos || s.rfind("git@", 0) == 0 || (s.size() > 4 && s.ends_with(".git"));
}

std::string fallback_name(const std::string& source, const std::string& path) {
  std::string base = path.empty() ? source : path;
  while (!base.empty() && (base.back() == '/' || base.back() == '\\')) base.pop_back();
  auto slash = base.find_last_of("/:");
  if (slash != std::string::npos) base = base.substr(slash + 1);
  if (base.ends_with(".git")) base.resize(base.size() - 4);
  return base;
}

struct Staging {
  fs::path dir;
  ~Staging() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

// Fetches a plugin into `staging` and returns its folder there.
std::optional<fs::path> fetch_source(const InstallRecord& rec, const fs::path& staging, InstallRecord& out,
                                     std::string& error) {
  out = rec;
  std::error_code ec;
  bool local_dir = fs::is_directory(rec.source, ec) && !looks_like_git_url(rec.source);
  bool use_git = !local_dir || !rec.ref.empty();
  fs::path base;
  if (use_git) {
    if (local_dir && !fs::exists(fs::path(rec.source) / ".git", ec)) {
      error = "--ref works only with git sources, and " + rec.source + " is a folder that is not a git repository";
      return std::nullopt;
    }
    base = staging / "clone";
    std::vector<std::string> argv = {"git", "clone", "--quiet"};
    if (!rec.ref.empty()) {
      argv.push_back("--branch");
      argv.push_back(rec.ref);
    }
    argv.push_back("--");
    argv.push_back(rec.source);
    argv.push_back(base.string());
    std::string output;
    int rc = run_process(argv, staging, output);
    if (rc == 127) {
      error = "installing from git needs git, which was not found on PATH";
      return std::nullopt;
    }
    if (rc != 0) {
      error = "git clone " + rec.source + (rec.ref.empty() ? "" : " (ref " + rec.ref + ")") + " failed: " + trim(output);
      return std::nullopt;
    }
    std::string head;
    if (run_process({"git", "-C", base.string(), "rev-parse", "HEAD"}, staging, head) == 0) out.commit = trim(head);
    if (local_dir) out.source = fs::absolute(rec.source).lexically_normal().string();
  } else {
    base = fs::absolute(rec.source).lexically_normal();
    out.source = base.string();
    out.commit.clear();
  }
  fs::path dir = base;
  if (!rec.path.empty()) {
    if (fs::path(rec.path).is_absolute() || !path_within(base, (base / rec.path).lexically_normal())) {
      error = "--path " + rec.path + " must be a relative path inside the source";
      return std::nullopt;
    }
    dir = (base / rec.path).lexically_normal();
  }
  if (!fs::is_directory(dir, ec)) {
    error = "no folder " + (rec.path.empty() ? rec.source : rec.path + " in " + rec.source);
    return std::nullopt;
  }
  if (!detail::detect_manifest(dir)) {
    error = "no plugin manifest in " + (rec.path.empty() ? rec.source : rec.source + " --path " + rec.path) +
            " (expected .openvaala-plugin/plugin.yaml, .codex-plugin/plugin.json, .claude-plugin/plugin.json or an "
            "Agent Plugins plugin.json)";
    return std::nullopt;
  }
  return dir;
}

std::string plugin_name_of(const fs::path& dir, const std::string& fallback) {
  std::string n = detail::plugin_declared_name(dir);
  if (n == dir.filename().string()) {
    // No name in the manifest (or it equals the staging folder's name): use the source's name.
    auto m = detail::detect_manifest(dir);
    if (m && m->first == PluginInfo::Format::OpenVaala) return n;
    return fallback;
  }
  return n;
}

std::string install_record_yaml(const InstallRecord& r) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << r.source;
  e << YAML::Key << "ref" << YAML::Value << YAML::DoubleQuoted << r.ref;
  e << YAML::Key << "path" << YAML::Value << YAML::DoubleQuoted << r.path;
  e << YAML::Key << "commit" << YAML::Value << YAML::DoubleQuoted << r.commit;
  e << YAML::EndMap;
  return "# Written by `openvaala plugin install`; `openvaala plugin update` reads it. Do not edit.\n" +
         std::string(e.c_str()) + "\n";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// plugins.disabled in config.yaml

std::vector<std::string> read_plugins_disabled(const fs::path& config_file) {
  std::vector<std::string> out;
  try {
    auto n = YAML::LoadFile(config_file.string());
    if (n.IsMap() && n["plugins"] && n["plugins"].IsMap() && n["plugins"]["disabled"] &&
        n["plugins"]["disabled"].IsSequence())
      for (const auto& x : n["plugins"]["disabled"])
        if (x.IsScalar()) out.push_back(x.Scalar());
    return out;
  } catch (const YAML::Exception&) {
  }
  // Not loadable YAML: read a `disabled: [a, b]` line under `plugins:` leniently.
  auto text = support::read_file(config_file);
  if (!text) return out;
  auto lines = split_lines(*text);
  bool in_plugins = false;
  for (const auto& l : lines) {
    if (!l.empty() && l[0] != ' ' && l[0] != '#') in_plugins = l.rfind("plugins:", 0) == 0;
    if (!in_plugins) continue;
    auto t = trim(l);
    if (t.rfind("disabled:", 0) == 0) {
      auto v = strip_comment(t.substr(9));
      if (v.size() >= 2 && v.front() == '[' && v.back() == ']') {
        std::stringstream ss(v.substr(1, v.size() - 2));
        std::string item;
        while (std::getline(ss, item, ','))
          if (!trim(item).empty()) out.push_back(trim(item));
      }
    } else if (t.rfind("- ", 0) == 0) {
      out.push_back(trim(t.substr(2)));
    }
  }
  return out;
}

std::string edit_plugins_disabled(const std::string& text, const std::vector<std::string>& names) {
  auto lines = split_lines(text);
  const std::string value = flow_list(names);
  std::size_t plugins_line = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    if (l.rfind("plugins:", 0) == 0) {
      auto rest = strip_comment(l.substr(8));
      if (rest.empty()) {
        plugins_line = i;
        break;
      }
      // A flow mapping on one line (`plugins: {disabled: [a]}`): rewrite it whole.
      lines[i] = "plugins: {disabled: " + value + "}";
      std::string out;
      for (const auto& x : lines) out += x + "\n";
      return out;
    }
  }
  if (plugins_line == lines.size()) {
    std::string out = text;
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += "plugins:\n  disabled: " + value + "\n";
    return out;
  }
  std::size_t end = plugins_line + 1;
  while (end < lines.size() && (is_blank_or_comment(lines[end]) || lines[end][0] == ' ' || lines[end][0] == '\t'))
    ++end;
  std::string indent = "  ";
  for (std::size_t j = plugins_line + 1; j < end; ++j)
    if (!is_blank_or_comment(lines[j])) {
      indent = lines[j].substr(0, lines[j].find_first_not_of(" \t"));
      break;
    }
  for (std::size_t j = plugins_line + 1; j < end; ++j) {
    auto t = trim(lines[j]);
    auto ind = lines[j].find_first_not_of(" \t");
    if (t.rfind("disabled:", 0) != 0 || lines[j].substr(0, ind) != indent) continue;
    auto rest = strip_comment(t.substr(9));
    lines[j] = indent + "disabled: " + value;
    if (rest.empty()) {
      // A block sequence follows: drop its items.
      std::size_t k = j + 1;
      while (k < end) {
        auto tk = trim(lines[k]);
        auto ik = lines[k].find_first_not_of(" \t");
        if (tk == "-" || tk.rfind("- ", 0) == 0) {
          if (ik < indent.size()) break;
          lines.erase(lines.begin() + static_cast<long>(k));
          --end;
          continue;
        }
        if (tk.empty() || tk[0] == '#') {
          ++k;
          continue;
        }
        break;
      }
    }
    std::string out;
    for (const auto& x : lines) out += x + "\n";
    return out;
  }
  lines.insert(lines.begin() + static_cast<long>(plugins_line) + 1, indent + "disabled: " + value);
  std::string out;
  for (const auto& x : lines) out += x + "\n";
  return out;
}

bool write_plugins_disabled(const fs::path& config_file, const std::vector<std::string>& names, std::string& error) {
  std::string text = support::read_file(config_file).value_or("");
  std::string edited = edit_plugins_disabled(text, names);
  // Check the edit says what we meant; if the original was valid YAML and the text edit did not
  // work out, fall back to rewriting the document (comments are lost then).
  bool original_ok = true;
  YAML::Node original;
  try {
    original = YAML::Load(text);
  } catch (const YAML::Exception&) {
    original_ok = false;
  }
  bool edit_ok = false;
  try {
    auto n = YAML::Load(edited);
    std::vector<std::string> got;
    if (n["plugins"] && n["plugins"]["disabled"])
      for (const auto& x : n["plugins"]["disabled"]) got.push_back(x.as<std::string>(""));
    edit_ok = got == names;
  } catch (const YAML::Exception&) {
  }
  if (!edit_ok && original_ok && (original.IsMap() || original.IsNull())) {
    if (original.IsNull()) original = YAML::Node(YAML::NodeType::Map);
    if (!original["plugins"] || !original["plugins"].IsMap()) original["plugins"] = YAML::Node(YAML::NodeType::Map);
    YAML::Node list(YAML::NodeType::Sequence);
    for (const auto& n : names) list.push_back(n);
    list.SetStyle(YAML::EmitterStyle::Flow);
    original["plugins"]["disabled"] = list;
    YAML::Emitter e;
    e << original;
    edited = std::string(e.c_str()) + "\n";
  }
  std::error_code ec;
  fs::create_directories(config_file.parent_path(), ec);
  if (!write_file_atomic(config_file, edited)) {
    error = "cannot write " + config_file.string();
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------

fs::path PluginManager::find_plugin_dir(const std::string& name) const {
  std::error_code ec;
  fs::path direct = plugins_dir() / name;
  if (!name.empty() && name[0] != '.' && name.find('/') == std::string::npos &&
      fs::exists(fs::symlink_status(direct, ec)))
    return direct;
  for (fs::directory_iterator it(plugins_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    auto fn = it->path().filename().string();
    if (fn.empty() || fn[0] == '.') continue;
    if (detail::detect_manifest(it->path()) && detail::plugin_declared_name(it->path()) == name) return it->path();
  }
  return {};
}

bool PluginManager::validate(CommandResult& r, const std::string& undo_note) const {
  Diagnostics diags;
  auto e = Engine::load(options_, diags);
  if (!e->failed()) return true;
  for (const auto& d : diags)
    if (d.severity == Severity::Error) r.err += d.to_string() + "\n";
  r.err += "openvaala: the configuration does not load after this change; " + undo_note + "\n";
  r.exit_code = 1;
  return false;
}

bool PluginManager::check_agent_references(const std::string& name, const fs::path& dir, CommandResult& r) const {
  Diagnostics diags;
  auto e = Engine::load(options_, diags);
  const PluginInfo* p = nullptr;
  for (const auto& x : e->plugins())
    if (x.root == dir) p = &x;
  if (!p) return true;
  for (const auto& [agent_name, a] : e->agents()) {
    if (!a.mcp_servers) continue;
    for (const auto& id : *a.mcp_servers)
      if (std::find(p->mcp_server_ids.begin(), p->mcp_server_ids.end(), id) != p->mcp_server_ids.end()) {
        r.err += "openvaala: the agent '" + agent_name + "' (" + a.file.string() + ") uses the MCP server '" + id +
                 "' of the plugin '" + name + "'; remove it from that agent's mcp_servers first\n";
        r.exit_code = 1;
      }
  }
  return r.exit_code == 0;
}

CommandResult PluginManager::install(const std::string& source, const std::string& path, const std::string& ref) {
  CommandResult r;
  auto fail = [&](const std::string& msg) {
    r.err += "openvaala: " + msg + "\n";
    r.exit_code = 1;
    return r;
  };
  std::error_code ec;
  fs::create_directories(plugins_dir(), ec);
  if (ec) return fail("cannot create " + plugins_dir().string() + ": " + ec.message());
  Staging staging{plugins_dir() / (".staging-" + std::to_string(::getpid()))};
  fs::remove_all(staging.dir, ec);
  fs::create_directories(staging.dir, ec);
  InstallRecord want{source, ref, path, ""};
  if (fs::is_directory(source, ec) && !looks_like_git_url(source))
    want.source = fs::absolute(source).lexically_normal().string();
  InstallRecord got;
  std::string error;
  auto dir = fetch_source(want, staging.dir, got, error);
  if (!dir) return fail(error);
  std::string name = plugin_name_of(*dir, fallback_name(source, path));
  if (name == "skill" || !(is_kebab_name(name) || is_agent_plugins_name(name)))
    return fail("the plugin's name '" + name +
                "' is not valid (lowercase letters, digits and single hyphens; 'skill' is reserved)");
  fs::path target = plugins_dir() / name;
  if (fs::exists(fs::symlink_status(target, ec)))
    return fail("a plugin '" + name + "' is already installed in " + target.string() +
                " (use `openvaala plugin update " + name + "`, or uninstall it first)");
  if (!copy_plugin_tree(*dir, target, error)) {
    fs::remove_all(target, ec);
    return fail(error);
  }
  if (!write_file_atomic(target / ".openvaala-install.yaml", install_record_yaml(got))) {
    fs::remove_all(target, ec);
    return fail("cannot write " + (target / ".openvaala-install.yaml").string());
  }
  if (!validate(r, "the plugin was not installed")) {
    fs::remove_all(target, ec);
    return r;
  }
  std::string version;
  Diagnostics ignored;
  auto lp = detail::load_plugin(target, options_, ignored);
  r.out += "Installed " + name + (lp.info.version.empty() ? "" : " " + lp.info.version) + " from " + got.source +
           (got.commit.empty() ? "" : " (" + got.commit.substr(0, 12) + ")") + " into " + target.string() + "\n";
  auto disabled = read_plugins_disabled(config_file());
  if (std::find(disabled.begin(), disabled.end(), name) != disabled.end())
    r.out += "Note: it is listed in plugins.disabled; run `openvaala plugin enable " + name + "` to use it.\n";
  r.changed = true;
  return r;
}

CommandResult PluginManager::list() {
  CommandResult r;
  Diagnostics diags;
  auto e = Engine::load(options_, diags);
  if (e->plugins().empty()) {
    r.out = "No plugins in " + plugins_dir().string() + "\n";
    return r;
  }
  std::size_t wn = 4, wv = 7;
  for (const auto& p : e->plugins()) {
    wn = std::max(wn, p.name.size());
    wv = std::max(wv, p.version.empty() ? 1 : p.version.size());
  }
  auto pad = [](std::string s, std::size_t w) {
    s.resize(std::max(w, s.size()), ' ');
    return s;
  };
  for (const auto& p : e->plugins()) {
    r.out += pad(p.name, wn) + "  " + pad(p.version.empty() ? "-" : p.version, wv) + "  " +
             pad(p.enabled ? "enabled" : "disabled", 8) + "  " + describe_source(p);
    if (p.enabled && !p.valid) r.out += "  [manifest errors: see `openvaala config check`]";
    r.out += "\n";
  }
  return r;
}

CommandResult PluginManager::update(const std::optional<std::string>& name) {
  CommandResult r;
  std::vector<fs::path> dirs;
  std::error_code ec;
  if (name) {
    fs::path d = find_plugin_dir(*name);
    if (d.empty()) {
      r.err = "openvaala: no plugin named '" + *name + "' in " + plugins_dir().string() + "\n";
      r.exit_code = 1;
      return r;
    }
    if (!detail::read_install_record(d)) {
      r.err = "openvaala: the plugin '" + *name +
              "' was not installed with `openvaala plugin install` (no .openvaala-install.yaml); update it by hand\n";
      r.exit_code = 1;
      return r;
    }
    dirs.push_back(d);
  } else {
    for (fs::directory_iterator it(plugins_dir(), ec), end; !ec && it != end; it.increment(ec)) {
      auto fn = it->path().filename().string();
      if (!fn.empty() && fn[0] != '.' && detail::read_install_record(it->path())) dirs.push_back(it->path());
    }
    std::sort(dirs.begin(), dirs.end());
    if (dirs.empty()) {
      r.out = "No plugins installed with `openvaala plugin install`.\n";
      return r;
    }
  }
  struct Swap {
    fs::path target, backup;
  };
  std::vector<Swap> swaps;
  Staging staging{plugins_dir() / (".staging-" + std::to_string(::getpid()))};
  auto undo = [&] {
    for (auto it = swaps.rbegin(); it != swaps.rend(); ++it) {
      std::error_code e2;
      fs::remove_all(it->target, e2);
      fs::rename(it->backup, it->target, e2);
    }
  };
  for (const auto& d : dirs) {
    auto rec = *detail::read_install_record(d);
    std::string pname = d.filename().string();
    fs::remove_all(staging.dir, ec);
    fs::create_directories(staging.dir, ec);
    InstallRecord got;
    std::string error;
    auto src = fetch_source(rec, staging.dir, got, error);
    if (!src) {
      r.err += "openvaala: " + pname + ": " + error + "\n";
      r.exit_code = 1;
      continue;
    }
    if (!got.commit.empty() && got.commit == rec.commit) {
      r.out += pname + ": already up to date (" + got.commit.substr(0, 12) + ")\n";
      continue;
    }
    Swap s{d, plugins_dir() / (".backup-" + pname + "-" + std::to_string(::getpid()))};
    fs::remove_all(s.backup, ec);
    fs::rename(d, s.backup, ec);
    if (ec) {
      r.err += "openvaala: " + pname + ": cannot move the old version aside: " + ec.message() + "\n";
      r.exit_code = 1;
      continue;
    }
    swaps.push_back(s);
    if (!copy_plugin_tree(*src, d, error) || !write_file_atomic(d / ".openvaala-install.yaml", install_record_yaml(got))) {
      r.err += "openvaala: " + pname + ": " + (error.empty() ? "cannot write the plugin" : error) + "\n";
      r.exit_code = 1;
      undo();
      return r;
    }
    r.out += pname + ": updated" + (got.commit.empty() ? std::string(" from ") + got.source
                                                        : " to " + got.commit.substr(0, 12)) + "\n";
  }
  if (swaps.empty()) return r;
  if (!validate(r, "the update was undone")) {
    undo();
    r.out.clear();
    return r;
  }
  for (const auto& s : swaps) fs::remove_all(s.backup, ec);
  r.changed = true;
  return r;
}

CommandResult PluginManager::no_such_plugin(const std::string& name) const {
  CommandResult r;
  r.err = "openvaala: no plugin named '" + name + "' in " + plugins_dir().string() + "\n";
  r.exit_code = 1;
  return r;
}

CommandResult PluginManager::enable(const std::string& name) {
  CommandResult r;
  fs::path d = find_plugin_dir(name);
  auto disabled = read_plugins_disabled(config_file());
  std::string declared = d.empty() ? name : detail::plugin_declared_name(d);
  std::string dir_name = d.empty() ? name : d.filename().string();
  auto keep = disabled;
  keep.erase(std::remove_if(keep.begin(), keep.end(),
                            [&](const std::string& x) { return x == name || x == declared || x == dir_name; }),
             keep.end());
  if (d.empty() && keep.size() == disabled.size()) {
    r.err = "openvaala: no plugin named '" + name + "' in " + plugins_dir().string() + "\n";
    r.exit_code = 1;
    return r;
  }
  if (keep.size() == disabled.size()) {
    r.out = name + " is already enabled\n";
    return r;
  }
  auto before = support::read_file(config_file());
  std::string error;
  if (!write_plugins_disabled(config_file(), keep, error)) {
    r.err = "openvaala: " + error + "\n";
    r.exit_code = 1;
    return r;
  }
  if (!validate(r, "the plugin stays disabled")) {
    if (before) write_file_atomic(config_file(), *before);
    return r;
  }
  r.out = "Enabled " + name + "\n";
  r.changed = true;
  return r;
}

CommandResult PluginManager::disable(const std::string& name) {
  CommandResult r;
  fs::path d = find_plugin_dir(name);
  if (d.empty()) return no_such_plugin(name);
  std::string pname = d.filename().string();
  auto disabled = read_plugins_disabled(config_file());
  if (std::find(disabled.begin(), disabled.end(), pname) != disabled.end() ||
      std::find(disabled.begin(), disabled.end(), name) != disabled.end()) {
    r.out = name + " is already disabled\n";
    return r;
  }
  if (!check_agent_references(name, d, r)) return r;
  auto before = support::read_file(config_file());
  disabled.push_back(pname);
  std::string error;
  if (!write_plugins_disabled(config_file(), disabled, error)) {
    r.err = "openvaala: " + error + "\n";
    r.exit_code = 1;
    return r;
  }
  if (!validate(r, "the plugin stays enabled")) {
    if (before) write_file_atomic(config_file(), *before);
    else {
      std::error_code ec;
      fs::remove(config_file(), ec);
    }
    return r;
  }
  r.out = "Disabled " + name + "\n";
  r.changed = true;
  return r;
}

CommandResult PluginManager::uninstall(const std::string& name) {
  CommandResult r;
  fs::path d = find_plugin_dir(name);
  if (d.empty()) return no_such_plugin(name);
  if (!check_agent_references(name, d, r)) return r;
  std::string pname = d.filename().string();
  std::error_code ec;
  fs::path backup = plugins_dir() / (".backup-" + pname + "-" + std::to_string(::getpid()));
  fs::remove_all(backup, ec);
  fs::rename(d, backup, ec);
  if (ec) {
    r.err = "openvaala: cannot remove " + d.string() + ": " + ec.message() + "\n";
    r.exit_code = 1;
    return r;
  }
  auto before = support::read_file(config_file());
  auto disabled = read_plugins_disabled(config_file());
  auto keep = disabled;
  keep.erase(std::remove_if(keep.begin(), keep.end(), [&](const std::string& x) { return x == pname || x == name; }),
             keep.end());
  std::string error;
  if (keep.size() != disabled.size()) write_plugins_disabled(config_file(), keep, error);
  if (!validate(r, "the plugin was not uninstalled")) {
    fs::rename(backup, d, ec);
    if (before && keep.size() != disabled.size()) write_file_atomic(config_file(), *before);
    return r;
  }
  fs::remove_all(backup, ec);
  r.out = "Uninstalled " + name + "\n";
  r.changed = true;
  return r;
}

// ---------------------------------------------------------------------------------------------

std::vector<int> signal_running_servers() {
  std::vector<int> pids;
  const uid_t me = ::getuid();
  const pid_t self = ::getpid();
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string fn = it->path().filename().string();
    if (fn.empty() || !std::all_of(fn.begin(), fn.end(), ::isdigit)) continue;
    pid_t pid = static_cast<pid_t>(std::stol(fn));
    if (pid == self) continue;
    struct stat st{};
    if (::stat(it->path().c_str(), &st) != 0 || st.st_uid != me) continue;
    auto cmdline = support::read_file(it->path() / "cmdline");
    if (!cmdline || cmdline->empty()) continue;
    std::vector<std::string> argv;
    std::size_t pos = 0;
    while (pos < cmdline->size()) {
      auto nul = cmdline->find('\0', pos);
      if (nul == std::string::npos) nul = cmdline->size();
      argv.push_back(cmdline->substr(pos, nul - pos));
      pos = nul + 1;
    }
    if (argv.size() < 2 || argv[1] != "acp") continue;
    if (fs::path(argv[0]).filename() != "openvaala") continue;
    if (::kill(pid, SIGHUP) == 0) pids.push_back(pid);
  }
  return pids;
}

int run_process(const std::vector<std::string>& argv, const fs::path& cwd, std::string& output) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return 127;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return 127;
  }
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::setenv("GIT_TERMINAL_PROMPT", "0", 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) output.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace runtime::engine
