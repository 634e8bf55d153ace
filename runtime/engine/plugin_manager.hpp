#pragma once
// `openvaala plugin ...` and `openvaala serve reload` as a library (the CLI prints the result).
// Per the seed: the commands change only plugins/<name>/ and `plugins.disabled` in config.yaml,
// need no loadable config beforehand, load the full config afterwards and undo the change when
// that load fails.
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

class PluginManager {
 public:
  explicit PluginManager(Engine::Options options) : options_(std::move(options)) {}

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
  // Refuses when an agent's mcp_servers still names a server of this plugin.
  bool check_agent_references(const std::string& name, const fs::path& dir, CommandResult& r) const;

  Engine::Options options_;
};

// `plugins.disabled` of config.yaml: reads and rewrites it, keeping the rest of the file (comments
// included) as it is.
std::vector<std::string> read_plugins_disabled(const fs::path& config_file);
bool write_plugins_disabled(const fs::path& config_file, const std::vector<std::string>& names, std::string& error);
// The text transformation behind write_plugins_disabled (exposed for tests).
std::string edit_plugins_disabled(const std::string& text, const std::vector<std::string>& names);

// Sends SIGHUP to every `openvaala acp` process of this user (except this process). Returns
// their pids.
std::vector<int> signal_running_servers();

// Runs argv (PATH lookup) in `cwd`, stdout and stderr captured together; returns the exit code
// (127 when it cannot be started).
int run_process(const std::vector<std::string>& argv, const fs::path& cwd, std::string& output);

}  // namespace runtime::engine
