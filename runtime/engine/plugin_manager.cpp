// The `openvaala plugin` commands: install, list, update, enable, disable, uninstall, each
// checked by loading the whole configuration afterwards and undone when that load fails.
#include "runtime/engine/plugin_manager.hpp"
#include "runtime/config/paths.hpp"

#include <unistd.h>

#include <algorithm>

#include "runtime/config/config_edit.hpp"
#include "runtime/engine/loaders.hpp"
#include "runtime/engine/names.hpp"
#include "runtime/engine/plugin_fetch.hpp"
#include "support/file_io.hpp"

namespace runtime::engine {

namespace {

using Severity = Diagnostic::Severity;
using detail::Staging;

// config.yaml as it was before a command changed it.
struct ConfigBackup {
  fs::path file;
  std::optional<std::string> text;  // nullopt: there was no file

  explicit ConfigBackup(fs::path f) : file(std::move(f)), text(support::read_file(file)) {}
  void restore() const {
    std::error_code ec;
    if (!text) {
      fs::remove(file, ec);
      return;
    }
    try {
      config::write_config_file(file, *text);
    } catch (const std::exception&) {
      // The command reports its own failure; the file keeps the change.
    }
  }
};

}  // namespace

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
  config::create_private_directories(plugins_dir(), ec);
  if (ec) return fail("cannot create " + plugins_dir().string() + ": " + ec.message());
  Staging staging{plugins_dir() / (".staging-" + std::to_string(::getpid()))};
  fs::remove_all(staging.dir, ec);
  fs::create_directories(staging.dir, ec);
  InstallRecord want{source, ref, path, ""};
  if (fs::is_directory(source, ec) && !detail::looks_like_git_url(source))
    want.source = fs::absolute(source).lexically_normal().string();
  InstallRecord got;
  std::string error;
  auto dir = detail::fetch_source(want, staging.dir, git_, got, error);
  if (!dir) return fail(error);
  std::string name = detail::plugin_name_of(*dir, detail::fallback_name(source, path));
  if (name == "skill" || !(is_kebab_name(name) || is_agent_plugins_name(name)))
    return fail("the plugin's name '" + name +
                "' is not valid (lowercase letters, digits and single hyphens; 'skill' is reserved)");
  fs::path target = plugins_dir() / name;
  if (fs::exists(fs::symlink_status(target, ec)))
    return fail("a plugin '" + name + "' is already installed in " + target.string() +
                " (use `openvaala plugin update " + name + "`, or uninstall it first)");
  if (!detail::copy_plugin_tree(*dir, target, error) || !detail::write_install_record(target, got, error)) {
    fs::remove_all(target, ec);
    return fail(error);
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
             pad(p.enabled ? "enabled" : "disabled", 8) + "  " + detail::describe_source(p);
    if (p.enabled && !p.valid) r.out += "  [manifest errors: see `openvaala config check`]";
    r.out += "\n";
  }
  return r;
}

namespace {

// The plugin folders `update` replaced, each with its old version moved aside until the whole
// configuration loads.
struct Swaps {
  struct Swap {
    fs::path target, backup;
  };
  std::vector<Swap> done;

  // Puts every old version back, the last replaced first.
  void undo() const {
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      std::error_code e2;
      fs::remove_all(it->target, e2);
      fs::rename(it->backup, it->target, e2);
    }
  }
  void drop_backups() const {
    std::error_code ec;
    for (const auto& s : done) fs::remove_all(s.backup, ec);
  }
};

// Fetches one installed plugin again and, when it changed, puts the new version in its folder.
// A fetch that fails or a folder that cannot be moved aside is reported and skipped; false when
// the new version cannot be written (every swap is then undone and the update stops).
bool update_plugin(const fs::path& d, const fs::path& plugins_dir, const GitOptions& git, Staging& staging,
                   Swaps& swaps, CommandResult& r) {
  std::error_code ec;
  auto rec = *detail::read_install_record(d);
  std::string pname = d.filename().string();
  fs::remove_all(staging.dir, ec);
  fs::create_directories(staging.dir, ec);
  InstallRecord got;
  std::string error;
  auto src = detail::fetch_source(rec, staging.dir, git, got, error);
  if (!src) {
    r.err += "openvaala: " + pname + ": " + error + "\n";
    r.exit_code = 1;
    return true;
  }
  if (!got.commit.empty() && got.commit == rec.commit) {
    r.out += pname + ": already up to date (" + got.commit.substr(0, 12) + ")\n";
    return true;
  }
  Swaps::Swap s{d, plugins_dir / (".backup-" + pname + "-" + std::to_string(::getpid()))};
  fs::remove_all(s.backup, ec);
  fs::rename(d, s.backup, ec);
  if (ec) {
    r.err += "openvaala: " + pname + ": cannot move the old version aside: " + ec.message() + "\n";
    r.exit_code = 1;
    return true;
  }
  swaps.done.push_back(s);
  if (!detail::copy_plugin_tree(*src, d, error) || !detail::write_install_record(d, got, error)) {
    r.err += "openvaala: " + pname + ": " + (error.empty() ? "cannot write the plugin" : error) + "\n";
    r.exit_code = 1;
    swaps.undo();
    return false;
  }
  r.out += pname + ": updated" + (got.commit.empty() ? std::string(" from ") + got.source
                                                      : " to " + got.commit.substr(0, 12)) + "\n";
  return true;
}

}  // namespace

// The folders `update` fetches again: the named plugin, or every plugin installed with
// `openvaala plugin install`. None, with `r` saying why, when there is nothing to update.
std::vector<fs::path> PluginManager::update_targets(const std::optional<std::string>& name, CommandResult& r) const {
  std::vector<fs::path> dirs;
  if (name) {
    fs::path d = find_plugin_dir(*name);
    if (d.empty()) {
      r.err = "openvaala: no plugin named '" + *name + "' in " + plugins_dir().string() + "\n";
      r.exit_code = 1;
    } else if (!detail::read_install_record(d)) {
      r.err = "openvaala: the plugin '" + *name +
              "' was not installed with `openvaala plugin install` (no .openvaala-install.yaml); update it by hand\n";
      r.exit_code = 1;
    } else {
      dirs.push_back(d);
    }
    return dirs;
  }
  std::error_code ec;
  for (fs::directory_iterator it(plugins_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    auto fn = it->path().filename().string();
    if (!fn.empty() && fn[0] != '.' && detail::read_install_record(it->path())) dirs.push_back(it->path());
  }
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) r.out = "No plugins installed with `openvaala plugin install`.\n";
  return dirs;
}

CommandResult PluginManager::update(const std::optional<std::string>& name) {
  CommandResult r;
  const std::vector<fs::path> dirs = update_targets(name, r);
  if (dirs.empty()) return r;
  Swaps swaps;
  Staging staging{plugins_dir() / (".staging-" + std::to_string(::getpid()))};
  for (const auto& d : dirs)
    if (!update_plugin(d, plugins_dir(), git_, staging, swaps, r)) return r;
  if (swaps.done.empty()) return r;
  if (!validate(r, "the update was undone")) {
    swaps.undo();
    r.out.clear();
    return r;
  }
  swaps.drop_backups();
  r.changed = true;
  return r;
}

CommandResult PluginManager::no_such_plugin(const std::string& name) const {
  CommandResult r;
  r.err = "openvaala: no plugin named '" + name + "' in " + plugins_dir().string() + "\n";
  r.exit_code = 1;
  return r;
}

bool PluginManager::set_disabled(const std::vector<std::string>& names, CommandResult& r,
                                 const std::string& undo_note) const {
  const ConfigBackup before(config_file());
  std::string error;
  if (!write_plugins_disabled(config_file(), names, error)) {
    r.err = "openvaala: " + error + "\n";
    r.exit_code = 1;
    return false;
  }
  if (validate(r, undo_note)) return true;
  before.restore();
  return false;
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
  if (d.empty() && keep.size() == disabled.size()) return no_such_plugin(name);
  if (keep.size() == disabled.size()) {
    r.out = name + " is already enabled\n";
    return r;
  }
  if (!set_disabled(keep, r, "the plugin stays disabled")) return r;
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
  disabled.push_back(pname);
  if (!set_disabled(disabled, r, "the plugin stays enabled")) return r;
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
  auto disabled = read_plugins_disabled(config_file());
  auto keep = disabled;
  keep.erase(std::remove_if(keep.begin(), keep.end(), [&](const std::string& x) { return x == pname || x == name; }),
             keep.end());
  const bool kept_all = keep.size() == disabled.size();
  if (kept_all ? !validate(r, "the plugin was not uninstalled") : !set_disabled(keep, r, "the plugin was not uninstalled")) {
    fs::rename(backup, d, ec);
    return r;
  }
  fs::remove_all(backup, ec);
  r.out = "Uninstalled " + name + "\n";
  r.changed = true;
  return r;
}

}  // namespace runtime::engine
