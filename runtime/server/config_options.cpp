#include "runtime/server/config_options.hpp"

#include "runtime/providers/model_provider.hpp"

namespace runtime::server {

namespace json = boost::json;

namespace {
using acp::schema::SessionConfigOption;
using acp::schema::SessionConfigSelectOption;

SessionConfigOption select(const char* id, const char* name, const char* description, std::string current,
                           std::vector<SessionConfigSelectOption> options, const char* category = nullptr) {
  SessionConfigOption o{id, name, description, std::nullopt, std::move(current), std::move(options)};
  if (category) o.category = category;
  return o;
}

SessionConfigOption agent_option(const engine::Engine& engine, const std::string& current) {
  std::vector<SessionConfigSelectOption> options;
  for (const auto& [name, a] : engine.agents()) {
    SessionConfigSelectOption o{name, name, std::nullopt};
    if (!a.description.empty()) o.description = a.description;
    options.push_back(std::move(o));
  }
  return select("agent", "Agent", "Which agent (instructions, skills and MCP servers) this session uses",
                engine.agent_or_default(current), std::move(options));
}

// Where the session's tools run unless a call names another executor.
SessionConfigOption executor_option(const Session& s) {
  std::vector<SessionConfigSelectOption> options;
  for (const auto& id : s.services.executors->ids()) {
    SessionConfigSelectOption o{id, id, std::nullopt};
    if (auto ex = s.services.executors->find(id, s.settings.cwd)) o.description = ex->describe();
    options.push_back(std::move(o));
  }
  return select("executor", "Executor", "Where files are read and edited and commands run", s.settings.executor,
                std::move(options));
}

std::string current_model(const Session& s) {
  return providers::choose_model(s.services.engine->main_config(), s.model_override()).model;
}
}  // namespace

acp::schema::SessionModeState mode_state(const Session& s) {
  acp::schema::SessionModeState state{mode_id(s.settings.mode), {}};
  for (const auto& m : all_modes()) state.availableModes.push_back({m.id, m.name, m.description});
  return state;
}

json::object modes_state(const Session& s) { return json::value_from(mode_state(s)).as_object(); }

std::vector<std::string> thought_level_values(const Session& s) {
  if (!s.services.engine) return {};
  auto current = current_model(s);
  if (current.empty()) return {};
  const auto& cfg = s.services.engine->main_config();
  const std::string provider = current.substr(0, current.find('/'));
  auto it = cfg.providers.find(provider);
  // The built-in providers are named after their api_type.
  if ((it != cfg.providers.end() ? it->second.api_type : provider) != "openai") return {};
  return {kDefaultThoughtLevel, "low", "medium", "high"};
}

std::vector<std::string> model_values(const Session& s, const providers::ModelCatalog& models) {
  if (!s.services.engine) return {};
  auto current = current_model(s);
  if (current.empty()) return {};
  return models.choices(s.services.engine->main_config(), current);
}

std::vector<SessionConfigOption> config_option_list(const Session& s, const providers::ModelCatalog& models) {
  std::vector<SessionConfigSelectOption> modes;
  for (const auto& m : all_modes()) modes.push_back({m.id, m.name, m.description});
  std::vector<SessionConfigOption> out{
      select("mode", "Mode", "What the agent may do without asking", mode_id(s.settings.mode), std::move(modes), "mode")};
  // Category "model": editors (Zed) build their model menu from the option of that category.
  if (auto values = model_values(s, models); !values.empty()) {
    std::vector<SessionConfigSelectOption> options;
    for (auto& v : values) options.push_back({v, v, std::nullopt});
    out.push_back(select("model", "Model", "Which model answers, from the next request on", values.front(), std::move(options),
                         "model"));
  }
  if (auto levels = thought_level_values(s); !levels.empty()) {
    std::vector<SessionConfigSelectOption> options;
    for (auto& v : levels) options.push_back({v, v == kDefaultThoughtLevel ? "Model default" : v, std::nullopt});
    out.push_back(select("thought_level", "Thought level", "How hard the model reasons (OpenAI reasoning_effort)",
                         s.settings.reasoning_effort.empty() ? kDefaultThoughtLevel : s.settings.reasoning_effort, std::move(options),
                         "thought_level"));
  }
  if (s.services.engine && s.services.engine->agents().size() > 1) out.push_back(agent_option(*s.services.engine, s.settings.agent_name));
  // Only once executors/ declares one: local and the built-in openvaala alone are no choice to offer.
  if (s.services.executors && s.services.engine && !s.services.engine->executors().empty()) out.push_back(executor_option(s));
  return out;
}

json::array config_options(const Session& s, const providers::ModelCatalog& models) {
  return json::value_from(config_option_list(s, models)).as_array();
}

}  // namespace runtime::server
