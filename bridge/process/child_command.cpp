#include "bridge/process/child_command.hpp"

#include <map>
#include <set>
#include <string_view>

extern char** environ;

namespace bridge::process::detail {

std::vector<std::string> exec_candidates(const std::string& file, const std::string& path_var) {
  if (file.find('/') != std::string::npos) return {file};
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto colon = path_var.find(':', start);
    std::string dir = path_var.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    out.push_back(dir + "/" + file);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

ChildEnvironment child_environment(const ProcessSpec& spec) {
  ChildEnvironment env;
  std::set<std::string> overlay_keys;
  for (const auto& [k, v] : spec.env_overlay) overlay_keys.insert(k);
  bool path_from_overlay = false;
  for (const auto& [k, v] : spec.env_overlay) {
    if (k == "PATH") {
      env.path_var = v;
      path_from_overlay = true;
    }
  }
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    std::string key(entry.substr(0, eq));
    if (overlay_keys.count(key)) continue;
    if (key == "PATH" && !path_from_overlay && eq != std::string_view::npos) {
      env.path_var = std::string(entry.substr(eq + 1));
    }
    env.entries.emplace_back(entry);
  }
  std::map<std::string, std::string> overlay_final;
  for (const auto& [k, v] : spec.env_overlay) overlay_final[k] = v;
  for (const auto& [k, v] : spec.env_overlay) {
    auto it = overlay_final.find(k);
    if (it == overlay_final.end()) continue;
    env.entries.push_back(k + "=" + it->second);
    overlay_final.erase(it);
  }
  if (env.path_var.empty() && !path_from_overlay) env.path_var = "/usr/local/bin:/usr/bin:/bin";
  return env;
}

}  // namespace bridge::process::detail
