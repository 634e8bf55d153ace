#pragma once
// `openvaala plugin ...` as a library (the CLI prints the result). Per the seed: the commands
// change only plugins/<name>/ and `plugins.disabled` in config.yaml, need no loadable config
// beforehand, load the full config afterwards and undo the change when that load fails.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/engine.hpp"

namespace runtime::engine {

struct CommandResult {
  int exit_code = 0;
  std::string out;  // for stdout
  std::string err;  // for stderr (problems, one per line)
  bool changed = false;  // something was changed and kept: running servers should reload
};

// How `install` and `update` run git: the program, and how long one git command may take before
// it is stopped with everything it started.
struct GitOptions {
  std::string program = "git";
  std::chrono::milliseconds timeout = std::chrono::minutes(10);
};

class PluginManager {
 public:
  explicit PluginManager(Engine::Options options, GitOptions git = {})
      : options_(std::move(options)), git_(std::move(git)) {}

  CommandResult install(const std::string& source, const std::string& path, const std::string& ref);
  CommandResult list();
  CommandResult update(const std::optional<std::string>& name);
  CommandResult enable(const std::string& name);
  CommandResult disable(const std::string& name);
  CommandResult uninstall(const std::string& name);

 private:
  fs::path plugins_dir() const { return options_.config_root / "plugins"; }
  fs::path config_file() const { return options_.config_root / "config.yaml"; }
  // The folder of the plugin called `name` (folder name or declared name); empty when none.
  fs::path find_plugin_dir(const std::string& name) const;
  // The failure every NAME command gives for a plugin that is not installed.
  CommandResult no_such_plugin(const std::string& name) const;
  // Loads the full config; false (with the errors in `r.err`) when the load fails.
  bool validate(CommandResult& r, const std::string& undo_note) const;
  // The plugin folders `update` fetches again; none (with `r` saying why) when there is nothing to do.
  std::vector<fs::path> update_targets(const std::optional<std::string>& name, CommandResult& r) const;
  // Refuses when an agent's mcp_servers still names a server of this plugin.
  bool check_agent_references(const std::string& name, const fs::path& dir, CommandResult& r) const;
  // Sets plugins.disabled to `names` and loads the full config; when that fails, config.yaml is
  // put back as it was and `r` says so, ending with `undo_note`.
  bool set_disabled(const std::vector<std::string>& names, CommandResult& r, const std::string& undo_note) const;

  Engine::Options options_;
  GitOptions git_;
};

// `plugins.disabled` of config.yaml: reads it (leniently when the file is not valid YAML) and
// rewrites it with the config.yaml editor, keeping the rest of the file (comments included).
std::vector<std::string> read_plugins_disabled(const fs::path& config_file);
bool write_plugins_disabled(const fs::path& config_file, const std::vector<std::string>& names, std::string& error);
// The text transformation behind write_plugins_disabled (exposed for tests).
std::string edit_plugins_disabled(const std::string& text, const std::vector<std::string>& names);

}  // namespace runtime::engine
