#include "runtime/config/main_config.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/config/yaml_reading.hpp"

namespace runtime::config {

namespace fs = std::filesystem;

// A price per million tokens: a number, zero or more.
static std::optional<double> read_rate(YamlReader& r, const YAML::Node& price, const char* key, const std::string& where) {
  auto n = price[key];
  if (!n || n.IsNull()) return std::nullopt;
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v) || v < 0) {
    r.error(n, where + "price." + key + " must be a number (what a million tokens cost, 0 or more), not '" +
                   (n.IsScalar() ? n.Scalar() : std::string("a ") + (n.IsMap() ? "mapping" : "list")) + "'");
    return std::nullopt;
  }
  return v;
}

// `price: {input, output, cached_input?, currency?}` of one model; nullopt (reported) when unusable.
static std::optional<ModelPrice> read_price(YamlReader& r, const YAML::Node& node, const std::string& where) {
  if (!r.expect_map(node, where + "price")) return std::nullopt;
  r.check_keys(node, {"input", "output", "cached_input", "currency"}, where + "price");
  ModelPrice price;
  bool ok = true;
  for (auto [key, field] : {std::pair{"input", &price.input}, std::pair{"output", &price.output}}) {
    if (auto v = read_rate(r, node, key, where)) {
      *field = *v;
    } else if (!node[key] || node[key].IsNull()) {
      r.error(node, where + "price." + key + " is missing (what a million " + key + " tokens cost)");
      ok = false;
    } else {
      ok = false;
    }
  }
  if (node["cached_input"] && !node["cached_input"].IsNull()) {
    price.cached_input = read_rate(r, node, "cached_input", where);
    ok = ok && price.cached_input;
  }
  if (auto c = node["currency"]; c && !c.IsNull()) {
    if (!c.IsScalar() || c.Scalar().empty()) {
      r.error(c, where + "price.currency must be a currency code such as USD or EUR, or a unit such as credits");
      ok = false;
    } else {
      price.currency = c.Scalar();
    }
  }
  return ok ? std::optional<ModelPrice>(price) : std::nullopt;
}

// A provider's `models:` list (what the model picker offers), each a model name as written after
// '<provider id>/' in `model:`, or `{id: <name>, price: {...}}` for a model with a price.
// Bad entries are reported and left out.
static std::optional<std::vector<std::string>> read_models(YamlReader& r, ProviderConfig& p, const YAML::Node& node) {
  if (!node || node.IsNull()) return std::nullopt;
  const std::string where = "provider '" + p.id + "': ";
  if (!node.IsSequence()) {
    r.error(node, where + "models must be a list of model names");
    return std::nullopt;
  }
  std::vector<std::string> models;
  for (const auto& item : node) {
    std::string name;
    if (item.IsMap()) {
      r.check_keys(item, {"id", "price"}, where + "a models entry");
      auto id = item["id"];
      if (!id || !id.IsScalar() || id.Scalar().empty()) {
        r.error(id ? id : YAML::Node(item), where + "a models entry written as a mapping needs 'id: <model name>'");
        continue;
      }
      name = id.Scalar();
      if (auto price = item["price"]; price && !price.IsNull())
        if (auto parsed = read_price(r, price, where + "model '" + name + "': ")) p.prices[name] = *parsed;
    } else if (!item.IsScalar() || item.Scalar().empty()) {
      r.error(item, where + "every entry of models must be a non-empty model name");
      continue;
    } else {
      name = item.Scalar();
    }
    if (std::find(models.begin(), models.end(), name) != models.end())
      r.warning(item, where + "model '" + name + "' is listed twice in models");  // harmless
    else
      models.push_back(name);
  }
  return models;
}

static void read_provider(YamlReader& r, const std::string& id, const YAML::Node& node, MainConfig& cfg) {
  if (!r.expect_map(node, "provider '" + id + "'")) return;
  r.check_keys(node, {"api_type", "base_url", "api_key_env", "max_retries", "idle_timeout_seconds",
                      "max_output_tokens", "context_window", "models"},
               "provider '" + id + "'");
  ProviderConfig p;
  p.id = id;
  p.api_type = r.string(node, "api_type").value_or("");
  if (p.api_type != "openai" && p.api_type != "anthropic") {
    r.error(node["api_type"] ? node["api_type"] : node,
            "provider '" + id + "': api_type must be 'openai' or 'anthropic'" +
                (p.api_type.empty() ? std::string(" (it is missing)") : ", not '" + p.api_type + "'"));
    return;
  }
  p.base_url = r.string(node, "base_url").value_or(p.api_type == "openai" ? "https://api.openai.com/v1"
                                                                           : "https://api.anthropic.com");
  if (p.base_url.rfind("http://", 0) != 0 && p.base_url.rfind("https://", 0) != 0) {
    r.error(node["base_url"], "provider '" + id + "': base_url must start with http:// or https://");
    return;
  }
  while (!p.base_url.empty() && p.base_url.back() == '/') p.base_url.pop_back();
  p.api_key_env = r.string(node, "api_key_env").value_or("");
  if (auto v = node["max_retries"]; v && v.IsScalar() && v.Scalar() == "0") p.max_retries = 0;
  else if (auto n = r.positive_int(node, "max_retries")) p.max_retries = *n;
  if (auto n = r.positive_int(node, "idle_timeout_seconds")) p.idle_timeout_seconds = *n;
  p.max_output_tokens = r.positive_int(node, "max_output_tokens");
  p.context_window = r.positive_int(node, "context_window");
  p.models = read_models(r, p, node["models"]);
  cfg.providers[id] = std::move(p);
}

// A value that is not one of the three keeps the default (on): a typo never turns it off.
static void read_sandbox(YamlReader& r, const YAML::Node& root, MainConfig& cfg) {
  auto value = r.string(root, "sandbox");
  if (!value) return;
  if (*value == "on") cfg.sandbox = SandboxSetting::On;
  else if (*value == "off") cfg.sandbox = SandboxSetting::Off;
  else if (*value == "always") cfg.sandbox = SandboxSetting::Always;
  else
    r.error(root["sandbox"], "sandbox must be 'on' (every mode but Full auto), 'off' or 'always', not '" + *value + "'");
}

MainConfig load_main_config(const fs::path& config_root, Diagnostics& diags) {
  MainConfig cfg;
  cfg.file = config_root / "config.yaml";
  std::error_code ec;
  if (!fs::exists(cfg.file, ec)) return cfg;
  YamlReader r(cfg.file, diags);
  auto root = r.load();
  if (!root || root->IsNull()) return cfg;
  if (!r.expect_map(*root, "config.yaml")) return cfg;
  r.check_keys(*root, {"model", "providers", "skills", "plugins", "default_agent", "default_executor", "max_turn_requests",
                       "mcp_startup_wait_ms", "max_mcp_output_bytes", "max_mcp_tools_per_server", "sandbox"},
                 "config.yaml");
  cfg.model = r.string(*root, "model");
  if (cfg.model && cfg.model->find('/') == std::string::npos) {
    r.error((*root)["model"], "model must be '<provider id>/<model name>', got '" + *cfg.model + "'");
    cfg.model.reset();
  }
  if (auto providers = (*root)["providers"]; providers && !providers.IsNull()) {
    if (r.expect_map(providers, "'providers'"))
      for (const auto& kv : providers) read_provider(r, kv.first.as<std::string>(""), kv.second, cfg);
  }
  if (auto skills = (*root)["skills"]; skills && !skills.IsNull() && r.expect_map(skills, "'skills'")) {
    r.check_keys(skills, {"directory"}, "'skills'");
    cfg.skills_directory = r.string(skills, "directory");
  }
  if (auto plugins = (*root)["plugins"]; plugins && !plugins.IsNull() && r.expect_map(plugins, "'plugins'")) {
    r.check_keys(plugins, {"disabled"}, "'plugins'");
    cfg.plugins_disabled = r.string_list(plugins, "disabled").value_or(std::vector<std::string>{});
  }
  cfg.default_agent = r.string(*root, "default_agent");
  cfg.default_executor = r.string(*root, "default_executor");
  if (auto n = r.positive_int(*root, "max_turn_requests")) cfg.max_turn_requests = *n;
  if (auto n = r.positive_int(*root, "mcp_startup_wait_ms")) cfg.mcp_startup_wait = std::chrono::milliseconds(*n);
  if (auto n = r.positive_int(*root, "max_mcp_output_bytes")) cfg.mcp_limits.output_bytes = static_cast<std::size_t>(*n);
  if (auto n = r.positive_int(*root, "max_mcp_tools_per_server")) cfg.mcp_limits.tools_per_server = static_cast<std::size_t>(*n);
  read_sandbox(r, *root, cfg);
  if (cfg.model) {
    auto provider_id = cfg.model->substr(0, cfg.model->find('/'));
    if (!cfg.providers.count(provider_id) && provider_id != "openai" && provider_id != "anthropic")
      r.error((*root)["model"], "model '" + *cfg.model + "' names provider '" + provider_id +
                                    "', which is not defined under 'providers' (nor a built-in: openai, anthropic)");
  }
  return cfg;
}

}  // namespace runtime::config
