#include "runtime/engine/engine.hpp"

#include <algorithm>

#include "runtime/config/paths.hpp"

namespace runtime::engine {

std::string_view source_label(SkillSource s) {
  switch (s) {
    case SkillSource::ProjectAgents: return "project .agents/skills";
    case SkillSource::ProjectClaude: return "project .claude/skills";
    case SkillSource::Private: return "private skills directory";
    case SkillSource::Builtin: return "built-in";
    case SkillSource::Plugin: return "plugin";
    case SkillSource::HomeAgents: return "~/.agents/skills";
    case SkillSource::HomeClaude: return "~/.claude/skills";
  }
  return "";
}

std::string_view source_id(SkillSource s) {
  switch (s) {
    case SkillSource::ProjectAgents: return "project-agents";
    case SkillSource::ProjectClaude: return "project-claude";
    case SkillSource::Private: return "private";
    case SkillSource::Builtin: return "builtin";
    case SkillSource::Plugin: return "plugin";
    case SkillSource::HomeAgents: return "home-agents";
    case SkillSource::HomeClaude: return "home-claude";
  }
  return "";
}

Engine::Options Engine::default_options(const fs::path& config_root) {
  Options o;
  o.config_root = config_root;
  const char* home = std::getenv("HOME");
  o.home = home && *home ? fs::path(home) : fs::path("/");
  o.builtin_skills_dir = config::cache_dir() / "builtin-skills" / OPENVAALA_VERSION;
  o.plugin_data_root = config::data_dir() / "plugin-data";
  return o;
}

std::shared_ptr<const Engine> Engine::load(const fs::path& config_root, Diagnostics& diags) {
  return load(default_options(config_root), diags);
}

bool Engine::has_executor(std::string_view id) const {
  return id == config::kLocalExecutor || id == config::kOpenvaalaExecutor || executors_.count(std::string(id));
}

std::string Engine::default_executor(const Agent& agent) const {
  if (agent.executor && has_executor(*agent.executor)) return *agent.executor;
  if (main_.default_executor && has_executor(*main_.default_executor)) return *main_.default_executor;
  return config::kLocalExecutor;
}

const Agent* Engine::find_agent(std::string_view name) const {
  auto it = agents_.find(std::string(name));
  return it == agents_.end() ? nullptr : &it->second;
}

const PluginInfo* Engine::find_plugin(std::string_view name) const {
  for (const auto& p : plugins_)
    if (p.name == name || p.root.filename() == name) return &p;
  return nullptr;
}

const std::string& Engine::agent_or_default(std::string_view name) const {
  auto it = agents_.find(std::string(name));
  return it != agents_.end() ? it->first : default_agent_;
}

std::vector<McpServerConfig> Engine::mcp_servers_for(const Agent& agent) const {
  std::vector<McpServerConfig> out;
  for (const auto& s : mcp_servers_) {
    if (s.disabled) continue;
    if (agent.mcp_servers &&
        std::find(agent.mcp_servers->begin(), agent.mcp_servers->end(), s.id) == agent.mcp_servers->end())
      continue;
    out.push_back(s);
  }
  return out;
}

}  // namespace runtime::engine
