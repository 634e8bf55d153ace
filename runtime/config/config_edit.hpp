#pragma once
// The one editor of config.yaml: sets keys while keeping the rest of the file as it is (comments
// and layout included), and writes the result with the one atomic writer. `openvaala login`
// sets `model` and `providers.<id>`; the plugin commands set `plugins.disabled`.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <vector>

namespace runtime::config {

// One key to set. `path` names it from the top of the document: {"model"}, {"plugins",
// "disabled"}, {"providers", "<id>"}; mappings on the way are created (a value on the way that
// is not a mapping is replaced by one). `value` is written as it is: give a sequence the flow
// style for `[a, b]`.
struct ConfigSetting {
  std::vector<std::string> path;
  YAML::Node value;
};

struct EditedConfig {
  std::string text;
  // The text could not be edited in place (a flow-style document, a layout the editor does not
  // follow): `text` is the document re-emitted with the settings, and its comments are gone.
  bool comments_lost = false;
};

// Applies `settings`, in order, to config.yaml's text ("" when there is no file). The text is
// edited in place: a new top-level key goes at the end of the file, a new key of a nested
// mapping goes before its first entry, a key that is there has its value replaced. The result
// must parse to the old document with the new values; when it does not, the document is
// re-emitted (comments_lost). Text that is not valid YAML is edited in place unchecked (the
// caller's load of the result reports what is wrong with it). Throws std::runtime_error when the
// text is valid YAML but not a mapping.
EditedConfig edit_config_text(const std::string& text, const std::vector<ConfigSetting>& settings);

// Writes config.yaml through support::write_file_atomically: the file keeps its mode (0644 for a
// new file), a symlinked config.yaml is written at its target and stays a link, and a missing
// folder is created. Throws std::runtime_error naming the file and the failing step.
void write_config_file(const std::filesystem::path& file, const std::string& text);

}  // namespace runtime::config
