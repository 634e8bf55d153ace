#pragma once
// The `hooks:` section of an enabled plugin's manifest, handed from the plugin loader to the
// hook loader (which validates it exactly like a hooks/*.yaml file).
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

namespace runtime::hooks {

struct PluginHookSource {
  std::string plugin_name;
  std::filesystem::path plugin_root;    // absolute; becomes $OPENVAALA_PLUGIN_ROOT
  std::filesystem::path manifest_file;  // for `path:line:` diagnostics
  YAML::Node hooks;                     // the value of the manifest's `hooks:` key
};

}  // namespace runtime::hooks
