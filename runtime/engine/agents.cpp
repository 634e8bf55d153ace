// agents/<name>.yaml
#include <algorithm>

#include "runtime/engine/loaders.hpp"
#include "runtime/engine/names.hpp"

namespace runtime::engine::detail {

std::vector<fs::path> yaml_files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".yaml" && it->path().filename().string()[0] != '.') files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

std::map<std::string, Agent> load_agent_files(const fs::path& config_root, Diagnostics& diags) {
  std::map<std::string, Agent> out;
  for (const auto& f : yaml_files_in(config_root / "agents")) {
    config::YamlReader r(f, diags);
    auto root = r.load();
    if (!root) continue;
    Agent a;
    a.file = f;
    a.name = f.stem().string();
    if (root->IsNull()) {
      out[a.name] = std::move(a);
      continue;
    }
    if (!r.expect_map(*root, "an agent file")) continue;
    const auto before = diags.size();
    r.check_keys(*root, {"name", "description", "instructions", "model", "mcp_servers", "skills", "executor"}, "an agent file");
    if (!is_kebab_name(a.name))
      r.error_line(0, "the agent name '" + a.name +
                          "' (the file name) is invalid: use lowercase letters, digits and single hyphens");
    if (auto name = r.string(*root, "name"); name && *name != a.name)
      r.error((*root)["name"], "name '" + *name + "' does not match the file name '" + a.name + ".yaml'");
    a.description = r.string(*root, "description").value_or("");
    a.instructions = r.string(*root, "instructions").value_or("");
    a.model = r.string(*root, "model");
    a.executor = r.string(*root, "executor");
    if (a.model && a.model->find('/') == std::string::npos)
      r.error((*root)["model"], "model must be '<provider id>/<model name>', got '" + *a.model + "'");
    if ((*root)["mcp_servers"]) {
      if ((*root)["mcp_servers"].IsNull()) a.mcp_servers = std::vector<std::string>{};
      else a.mcp_servers = r.string_list(*root, "mcp_servers");
    }
    if ((*root)["skills"]) {
      if ((*root)["skills"].IsNull()) a.skills = std::vector<std::string>{};
      else a.skills = r.string_list(*root, "skills");
    }
    if (config::has_errors(Diagnostics(diags.begin() + static_cast<long>(before), diags.end()))) continue;
    out[a.name] = std::move(a);
  }
  return out;
}

}  // namespace runtime::engine::detail
