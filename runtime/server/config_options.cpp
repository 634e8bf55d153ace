#include "runtime/server/config_options.hpp"

#include "runtime/providers/model_provider.hpp"

namespace runtime::server {

namespace json = boost::json;

namespace {
json::object select(const char* id, const char* name, const char* description, std::string current,
                    json::array options) {
  return json::object{{"id", id},     {"name", name},           {"description", description},
                      {"type", "select"}, {"currentValue", std::move(current)}, {"options", std::move(options)}};
}

json::object agent_option(const engine::Engine& engine, const std::string& current) {
  json::array options;
  for (const auto& [name, a] : engine.agents()) {
    json::object o{{"value", name}, {"name", name}};
    if (!a.description.empty()) o["description"] = a.description;
    options.push_back(std::move(o));
  }
  return select("agent", "Agent", "Which agent (instructions, skills and MCP servers) this session uses",
                engine.agent_or_default(current), std::move(options));
}

// Where the session's tools run unless a call names another executor.
json::object executor_option(const Session& s) {
  json::array options;
  for (const auto& id : s.services.executors->ids()) {
    json::object o{{"value", id}, {"name", id}};
    if (auto ex = s.services.executors->find(id, s.settings.cwd)) o["description"] = ex->describe();
    options.push_back(std::move(o));
  }
  return select("executor", "Executor", "Where files are read and edited and commands run", s.settings.executor,
                std::move(options));
}

std::string current_model(const Session& s) {
  return providers::choose_model(s.services.engine->main_config(), s.model_override()).model;
}
}  // namespace

json::object modes_state(const Session& s) {
  json::array modes;
  for (const auto& m : all_modes())
    modes.push_back(json::object{{"id", m.id}, {"name", m.name}, {"description", m.description}});
  return json::object{{"currentModeId", mode_id(s.settings.mode)}, {"availableModes", std::move(modes)}};
}

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

json::array config_options(const Session& s, const providers::ModelCatalog& models) {
  json::array modes;
  for (const auto& m : all_modes()) modes.push_back(json::object{{"value", m.id}, {"name", m.name}, {"description", m.description}});
  auto mode = select("mode", "Mode", "What the agent may do without asking", mode_id(s.settings.mode), std::move(modes));
  mode["category"] = "mode";
  json::array out{std::move(mode)};
  // Category "model": editors (Zed) build their model menu from the option of that category.
  if (auto values = model_values(s, models); !values.empty()) {
    json::array options;
    for (auto& v : values) options.push_back(json::object{{"value", v}, {"name", v}});
    auto model = select("model", "Model", "Which model answers, from the next request on", values.front(), std::move(options));
    model["category"] = "model";
    out.push_back(std::move(model));
  }
  if (auto levels = thought_level_values(s); !levels.empty()) {
    json::array options;
    for (auto& v : levels) options.push_back(json::object{{"value", v}, {"name", v == kDefaultThoughtLevel ? "Model default" : v}});
    auto level = select("thought_level", "Thought level", "How hard the model reasons (OpenAI reasoning_effort)",
                        s.settings.reasoning_effort.empty() ? kDefaultThoughtLevel : s.settings.reasoning_effort, std::move(options));
    level["category"] = "thought_level";
    out.push_back(std::move(level));
  }
  if (s.services.engine && s.services.engine->agents().size() > 1) out.push_back(agent_option(*s.services.engine, s.settings.agent_name));
  // Only once executors/ declares one: local and the built-in openvaala alone are no choice to offer.
  if (s.services.executors && s.services.engine && !s.services.engine->executors().empty()) out.push_back(executor_option(s));
  return out;
}

}  // namespace runtime::server
