#pragma once
// Getting a plugin's files for `plugin install` and `plugin update` (internal to runtime/engine):
// a git clone (through the one child-process runner) or a local folder, copied into the plugins
// folder, and the install record kept beside them.
#include <filesystem>
#include <optional>
#include <string>

#include "runtime/engine/engine.hpp"
#include "runtime/engine/plugin_manager.hpp"

namespace runtime::engine::detail {

// A staging folder, removed with everything in it when this goes.
struct Staging {
  fs::path dir;
  ~Staging();
};

bool looks_like_git_url(const std::string& source);

// The plugin's name when its manifest declares none: the last part of --path or of the source,
// without a trailing .git.
std::string fallback_name(const std::string& source, const std::string& path);

// Fetches `rec` into `staging` (git clone, or nothing for a local folder) and returns the plugin
// folder; `got` is the record to keep (absolute local source, the commit cloned). nullopt with
// `error` on failure.
std::optional<fs::path> fetch_source(const InstallRecord& rec, const fs::path& staging, const GitOptions& git,
                                     InstallRecord& got, std::string& error);

// The name the plugin in `dir` goes by: its declared name, else `fallback`.
std::string plugin_name_of(const fs::path& dir, const std::string& fallback);

// Copies a plugin folder (symlinks kept as symlinks), leaving out a top-level .git and install record.
bool copy_plugin_tree(const fs::path& from, const fs::path& to, std::string& error);

// Writes <plugin_dir>/.openvaala-install.yaml.
bool write_install_record(const fs::path& plugin_dir, const InstallRecord& record, std::string& error);

// Where a plugin came from, for `plugin list`.
std::string describe_source(const PluginInfo& p);

}  // namespace runtime::engine::detail
