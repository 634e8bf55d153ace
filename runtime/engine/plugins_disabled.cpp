// `plugins.disabled` of config.yaml: read leniently, written with the one config.yaml editor.
#include <yaml-cpp/yaml.h>

#include <sstream>

#include "runtime/config/config_edit.hpp"
#include "runtime/engine/plugin_manager.hpp"
#include "support/file_io.hpp"
#include "support/text.hpp"

namespace runtime::engine {

using support::trim;

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
  // Not loadable YAML: read a `disabled: [a, b]` line or `- a` items under `plugins:` leniently,
  // so a plugin can still be enabled or disabled while the file is being fixed.
  auto text = support::read_file(config_file);
  if (!text) return out;
  std::istringstream in(*text);
  bool in_plugins = false;
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l[0] != ' ' && l[0] != '#') in_plugins = l.rfind("plugins:", 0) == 0;
    if (!in_plugins) continue;
    auto t = trim(l);
    if (t.rfind("disabled:", 0) == 0) {
      auto v = t.substr(9);
      v = trim(v.substr(0, v.find(" #")));
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
  YAML::Node list(YAML::NodeType::Sequence);
  for (const auto& n : names) list.push_back(n);
  list.SetStyle(YAML::EmitterStyle::Flow);
  return config::edit_config_text(text, {{{"plugins", "disabled"}, list}}).text;
}

bool write_plugins_disabled(const fs::path& config_file, const std::vector<std::string>& names, std::string& error) {
  try {
    config::write_config_file(config_file, edit_plugins_disabled(support::read_file(config_file).value_or(""), names));
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

}  // namespace runtime::engine
