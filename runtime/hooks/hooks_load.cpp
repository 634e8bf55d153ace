// Loading and validating hooks/*.yaml and plugin `hooks:` sections.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "runtime/config/yaml_reading.hpp"
#include "runtime/hooks/hooks.hpp"

namespace runtime::hooks {

namespace {

using runtime::config::Diagnostic;
using runtime::config::YamlReader;

struct Source {
  fs::path base_dir;                         // relative scripts resolve here (the YAML's directory)
  const PluginHookSource* plugin = nullptr;  // set for plugin hooks
};

std::string all_events_list() {
  std::string out;
  for (HookEvent e : kAllHookEvents) out += std::string(out.empty() ? "" : ", ") + std::string(to_string(e));
  return out;
}

std::size_t error_count(const Diagnostics& d) {
  return static_cast<std::size_t>(std::count_if(d.begin(), d.end(), [](const Diagnostic& x) {
    return x.severity == Diagnostic::Severity::Error;
  }));
}

bool present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

fs::path home_dir() {
  const char* h = std::getenv("HOME");
  return (h && *h) ? fs::path(h) : fs::path("/");
}

bool lexically_inside(const fs::path& p, const fs::path& root) {
  auto rel = p.lexically_normal().lexically_relative(root.lexically_normal());
  if (rel.empty()) return false;
  auto first = *rel.begin();
  return first != ".." && rel != ".";
}

// A plugin's script: a relative path that stays inside the plugin folder, links followed.
std::optional<fs::path> plugin_script_path(YamlReader& r, const YAML::Node& node, const std::string& prefix,
                                           const std::string& text, const PluginHookSource& plugin) {
  if (text.front() == '/' || text.front() == '~') {
    r.error(node, prefix + "plugin hook script '" + text + "' must be a relative path inside the plugin directory");
    return std::nullopt;
  }
  const fs::path root = plugin.plugin_root;
  fs::path path = (root / text).lexically_normal();
  bool inside = lexically_inside(path, root);
  std::error_code ec;
  if (inside && fs::exists(path, ec)) {
    auto real = fs::weakly_canonical(path, ec);
    auto real_root = fs::weakly_canonical(root, ec);
    inside = !ec && lexically_inside(real, real_root);
  }
  if (!inside) {
    r.error(node, prefix + "plugin hook script '" + text + "' is outside the plugin directory");
    return std::nullopt;
  }
  return path;
}

// The script must be an executable regular file starting with a shebang line.
bool check_script_file(YamlReader& r, const YAML::Node& node, const std::string& prefix, const std::string& text,
                       const fs::path& path) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (!fs::exists(st)) {
    r.error(node, prefix + "script '" + text + "' does not exist (" + path.string() + ")");
    return false;
  }
  if (!fs::is_regular_file(st)) {
    r.error(node, prefix + "script '" + text + "' is not a file (" + path.string() + ")");
    return false;
  }
  bool ok = true;
  {
    std::ifstream in(path, std::ios::binary);
    char head[2] = {0, 0};
    in.read(head, 2);
    if (!in || head[0] != '#' || head[1] != '!') {
      r.error(node, prefix + "script '" + text + "' does not start with a shebang line (#!)");
      ok = false;
    }
  }
  if (::access(path.c_str(), X_OK) != 0) {
    r.error(node, prefix + "script '" + text + "' is not executable (chmod +x " + path.string() + ")");
    ok = false;
  }
  return ok;
}

// Resolves and checks `script`; returns the absolute path, or nullopt after reporting.
std::optional<fs::path> check_script(YamlReader& r, const YAML::Node& node, const std::string& prefix,
                                     const Source& src) {
  if (!node.IsScalar()) {
    r.error(node, prefix + "'script' must be a string (a path to the script)");
    return std::nullopt;
  }
  const std::string text = node.Scalar();
  if (text.empty()) {
    r.error(node, prefix + "'script' must not be empty");
    return std::nullopt;
  }
  fs::path path;
  if (src.plugin) {
    auto in_plugin = plugin_script_path(r, node, prefix, text, *src.plugin);
    if (!in_plugin) return std::nullopt;
    path = *in_plugin;
  } else if (text.rfind("~/", 0) == 0) {
    path = home_dir() / text.substr(2);
  } else if (text.front() == '/') {
    path = text;
  } else {
    path = src.base_dir / text;
  }
  path = fs::absolute(path).lexically_normal();
  if (!check_script_file(r, node, prefix, text, path)) return std::nullopt;
  return path;
}

void read_hook_type(YamlReader& r, const YAML::Node& entry, const std::string& prefix) {
  const YAML::Node type = entry["type"];
  if (!present(type)) {
    r.error(entry, prefix + "'type' is required (the only type is 'command')");
  } else if (!type.IsScalar() || type.Scalar() != "command") {
    r.error(type, prefix + "type must be 'command'" +
                      (type.IsScalar() ? ", not '" + type.Scalar() + "'" : std::string()));
  }
}

// `command` or `script` (one of them); true when it is a script.
bool read_hook_action(YamlReader& r, const YAML::Node& entry, const std::string& prefix, const Source& src, Hook& h) {
  const YAML::Node command = entry["command"];
  const YAML::Node script = entry["script"];
  const bool has_command = present(command), has_script = present(script);
  if (has_command && has_script) {
    r.error(script, prefix + "write either 'command' or 'script', not both");
  } else if (!has_command && !has_script) {
    r.error(entry, prefix + "one of 'command' or 'script' is required");
  } else if (has_command) {
    if (!command.IsScalar()) {
      r.error(command, prefix + "'command' must be a string");
    } else if (command.Scalar().find_first_not_of(" \t\r\n") == std::string::npos) {
      r.error(command, prefix + "'command' must not be empty");
    } else {
      h.command = command.Scalar();
    }
  } else {
    h.script = check_script(r, script, prefix, src);
  }
  return has_script;
}

void read_hook_args(YamlReader& r, const YAML::Node& args, const std::string& prefix, bool has_script, Hook& h) {
  if (!has_script) return r.error(args, prefix + "'args' can only be used with 'script'");
  if (!args.IsSequence()) return r.error(args, prefix + "'args' must be a list of strings");
  for (const auto& a : args) {
    if (!a.IsScalar()) return r.error(a, prefix + "every entry of 'args' must be a string");
    h.args.push_back(a.Scalar());
  }
}

// Seconds, a positive number: whole or not (1.5), kept to the millisecond (at least 1 ms).
void read_hook_timeout(YamlReader& r, const YAML::Node& timeout, const std::string& prefix, Hook& h) {
  double secs = 0;
  if (!timeout.IsScalar() || !YAML::convert<double>::decode(timeout, secs) || !(secs > 0) || secs > 1e7) {
    r.error(timeout, prefix + "'timeout' must be a positive number of seconds" +
                         (timeout.IsScalar() ? ", not '" + timeout.Scalar() + "'" : std::string()));
  } else {
    h.timeout = std::max(std::chrono::milliseconds(1),
                         std::chrono::milliseconds(static_cast<long long>(std::llround(secs * 1000.0))));
  }
}

void read_hook_on_failure(YamlReader& r, const YAML::Node& on_failure, const std::string& prefix, Hook& h) {
  if (!event_allows_on_failure(h.event)) {
    r.error(on_failure, prefix + "'on_failure' can only be used on PreToolUse and UserPromptSubmit hooks");
  } else if (!on_failure.IsScalar() || (on_failure.Scalar() != "allow" && on_failure.Scalar() != "block")) {
    r.error(on_failure, prefix + "'on_failure' must be 'allow' or 'block'" +
                            (on_failure.IsScalar() ? ", not '" + on_failure.Scalar() + "'" : std::string()));
  } else {
    h.on_failure = on_failure.Scalar() == "block" ? OnFailure::Block : OnFailure::Allow;
  }
}

std::optional<Hook> read_hook(YamlReader& r, Diagnostics& diags, const YAML::Node& entry, HookEvent ev,
                              const Source& src) {
  const std::string ev_name(to_string(ev));
  const std::string prefix = ev_name + " hook: ";
  if (!entry.IsMap()) {
    r.error(entry, prefix + "each hook must be a mapping with 'type' and 'command' or 'script'");
    return std::nullopt;
  }
  const std::size_t errors_before = error_count(diags);
  r.check_keys(entry, {"type", "command", "script", "args", "timeout", "on_failure"}, ev_name + " hook");

  Hook h;
  h.event = ev;
  h.line = YamlReader::line_of(entry);
  h.source_file = r.file();
  if (src.plugin) {
    h.plugin_name = src.plugin->plugin_name;
    h.plugin_root = src.plugin->plugin_root;
  }
  read_hook_type(r, entry, prefix);
  const bool has_script = read_hook_action(r, entry, prefix, src, h);
  if (const YAML::Node args = entry["args"]; present(args)) read_hook_args(r, args, prefix, has_script, h);
  if (const YAML::Node timeout = entry["timeout"]; present(timeout)) read_hook_timeout(r, timeout, prefix, h);
  if (const YAML::Node on_failure = entry["on_failure"]; present(on_failure))
    read_hook_on_failure(r, on_failure, prefix, h);
  if (error_count(diags) != errors_before) return std::nullopt;
  return h;
}

// A group's `matcher`: false when it is broken (the group's hooks are then left out). Events
// without a matcher ignore one, with a warning unless it matches everything.
bool read_matcher(YamlReader& r, const YAML::Node& m, const std::string& name, HookEvent ev, HookMatcher& matcher) {
  if (!m.IsScalar()) {
    r.error(m, name + ": 'matcher' must be a string");
    return false;
  }
  if (!event_has_matcher(ev)) {
    const std::string& t = m.Scalar();
    if (!t.empty() && t != "*") r.warning(m, name + ": 'matcher' is ignored on " + name + " (its hooks always run)");
    return true;
  }
  std::string err;
  matcher = HookMatcher::parse(m.Scalar(), &err);
  if (err.empty()) return true;
  r.error(m, name + ": matcher '" + m.Scalar() + "' is not a valid regular expression: " + err);
  return false;
}

// One matcher group of an event: `matcher` and its `hooks`.
void read_matcher_group(YamlReader& r, Diagnostics& diags, const YAML::Node& group, const std::string& name,
                        HookEvent ev, const Source& src, HookSet& set) {
  if (!group.IsMap()) {
    r.error(group, name + ": each matcher group must be a mapping with 'hooks' and an optional 'matcher'");
    return;
  }
  r.check_keys(group, {"matcher", "hooks"}, name + " matcher group");
  HookMatcher matcher;
  bool matcher_ok = true;
  if (const YAML::Node m = group["matcher"]; present(m)) matcher_ok = read_matcher(r, m, name, ev, matcher);
  const YAML::Node list = group["hooks"];
  if (!present(list)) return r.error(group, name + " matcher group: 'hooks' is required (a list of hooks)");
  if (!list.IsSequence()) return r.error(list, name + " matcher group: 'hooks' must be a list of hooks");
  for (const auto& entry : list) {
    auto hook = read_hook(r, diags, entry, ev, src);
    if (hook && matcher_ok) {
      hook->matcher = matcher;
      set.hooks.push_back(std::move(*hook));
    }
  }
}

void read_hooks_section(YamlReader& r, Diagnostics& diags, const YAML::Node& section, const Source& src,
                        HookSet& set) {
  if (!section.IsMap()) {
    r.error(section, "'hooks' must be a mapping from event names (" + all_events_list() +
                         ") to lists of matcher groups");
    return;
  }
  for (const auto& kv : section) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    auto ev = parse_hook_event(name);
    if (!ev) {
      r.error(kv.first, "unknown hook event '" + name + "' (allowed: " + all_events_list() + ")");
      continue;
    }
    const YAML::Node groups = kv.second;
    if (!present(groups)) continue;
    if (!groups.IsSequence()) {
      r.error(groups, name + ": must be a list of matcher groups, each with 'hooks' and an optional 'matcher'");
      continue;
    }
    for (const auto& group : groups) read_matcher_group(r, diags, group, name, *ev, src, set);
  }
}

}  // namespace

std::vector<fs::path> list_hook_files(const fs::path& config_root, Diagnostics& diags) {
  std::vector<fs::path> files;
  const fs::path dir = config_root / "hooks";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.empty() || name.front() == '.') continue;
    if (it->path().extension() != ".yaml") continue;
    std::error_code fec;
    if (!it->is_regular_file(fec)) continue;  // the entry's cached type: no stat unless a symlink
    files.push_back(it->path());
  }
  if (ec) diags.push_back({Diagnostic::Severity::Error, dir.string(), 0, "cannot be listed: " + ec.message()});
  std::sort(files.begin(), files.end());
  return files;
}

void load_hook_file(const fs::path& file, HookSet& set, Diagnostics& diags) {
  YamlReader r(file, diags);
  auto root = r.load();
  if (!root || root->IsNull()) return;
  if (!root->IsMap()) {
    r.error(*root, "a hooks file must be a mapping with a 'hooks' key");
    return;
  }
  r.check_keys(*root, {"hooks"}, "a hooks file");
  const YAML::Node section = (*root)["hooks"];
  if (!present(section)) return;
  read_hooks_section(r, diags, section, Source{file.parent_path(), nullptr}, set);
}

void load_plugin_hooks(const PluginHookSource& p, HookSet& set, Diagnostics& diags) {
  if (!present(p.hooks)) return;
  YamlReader r(p.manifest_file, diags);
  YAML::Node section = p.hooks;
  // A node that went through YAML::Clone has lost its marks (every node at position 0, which
  // a real `hooks:` value never is): read the manifest again so diagnostics get real lines.
  if (section.Mark().pos == 0 && section.Mark().line == 0 && section.Mark().column == 0) {
    try {
      YAML::Node fresh = YAML::LoadFile(p.manifest_file.string());
      if (fresh.IsMap() && present(fresh["hooks"])) section = fresh["hooks"];
    } catch (const YAML::Exception&) {
      // keep the node we were given
    }
  }
  read_hooks_section(r, diags, section, Source{p.plugin_root, &p}, set);
}

HookSet load_hooks(const fs::path& config_root, const std::vector<PluginHookSource>& plugins, Diagnostics& diags) {
  HookSet set;
  for (const auto& file : list_hook_files(config_root, diags)) load_hook_file(file, set, diags);
  std::vector<const PluginHookSource*> sorted;
  for (const auto& p : plugins) sorted.push_back(&p);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const PluginHookSource* a, const PluginHookSource* b) { return a->plugin_name < b->plugin_name; });
  for (const PluginHookSource* p : sorted) load_plugin_hooks(*p, set, diags);
  return set;
}

}  // namespace runtime::hooks
