#include <spdlog/spdlog.h>

#include <cstdlib>
#include <mutex>
#include <set>

#include "runtime/config/credentials.hpp"
#include "runtime/providers/model_provider.hpp"

namespace runtime::providers {

namespace {

std::string env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v ? v : "";
}

config::ProviderConfig builtin_provider(const std::string& id) {
  config::ProviderConfig p;
  p.id = id;
  p.api_type = id;
  if (id == "openai") {
    p.base_url = env("OPENAI_BASE_URL").empty() ? "https://api.openai.com/v1" : env("OPENAI_BASE_URL");
    p.api_key_env = "OPENAI_API_KEY";
  } else {
    p.base_url = env("ANTHROPIC_BASE_URL").empty() ? "https://api.anthropic.com" : env("ANTHROPIC_BASE_URL");
    p.api_key_env = "ANTHROPIC_API_KEY";
  }
  while (!p.base_url.empty() && p.base_url.back() == '/') p.base_url.pop_back();
  return p;
}

// The key stored by `openvaala login` in <config root>/credentials.yaml, next to config.yaml.
// A file that cannot be used is an error naming file:line; a loose mode is a warning (logged
// once per process and file).
std::optional<std::string> stored_api_key(const config::MainConfig& cfg, const std::string& provider_id) {
  if (cfg.file.empty()) return std::nullopt;
  config::Diagnostics diags;
  auto creds = config::load_credentials(cfg.file.parent_path(), diags);
  std::string errors;
  for (const auto& d : diags) {
    if (d.severity == config::Diagnostic::Severity::Error) {
      errors += (errors.empty() ? "" : "; ") + d.to_string();
    } else {
      static std::mutex mu;
      static std::set<std::string> warned;
      std::lock_guard lock(mu);
      if (warned.insert(d.to_string()).second) spdlog::warn("{}", d.to_string());
    }
  }
  auto key = creds.api_key(provider_id);
  if (!key && !errors.empty()) throw ModelError(ModelError::Kind::Config, errors);
  return key;
}

std::string missing_key_message(const std::string& provider_id, const config::ProviderConfig& p) {
  std::string msg = "The provider '" + provider_id + "' needs an API key: ";
  if (!p.api_key_env.empty()) msg += "set $" + p.api_key_env + ", or ";
  msg += "run `openvaala login --provider " + provider_id + "` to store one in credentials.yaml";
  if (p.api_key_env.empty()) msg += " (or set api_key_env for it in config.yaml)";
  return msg + ".";
}

}  // namespace

ModelChoice choose_model(const config::MainConfig& cfg, const std::optional<std::string>& agent_model) {
  if (agent_model && !agent_model->empty()) return {*agent_model, ModelChoice::From::Agent};
  if (auto m = env("OPENVAALA_MODEL"); !m.empty()) return {m, ModelChoice::From::Environment};
  if (cfg.model && !cfg.model->empty()) return {*cfg.model, ModelChoice::From::ConfigFile};
  return {};
}

ResolvedModel resolve_model(const config::MainConfig& cfg, const std::optional<std::string>& model_override) {
  const std::string model = choose_model(cfg, model_override).model;
  if (model.empty()) {
    throw ModelError(ModelError::Kind::Config,
                     "No model is configured. Set 'model: <provider>/<model>' with a provider in " + cfg.file.string() +
                         ", or set OPENVAALA_MODEL=openai/<model> with OPENAI_API_KEY (or anthropic/<model> with "
                         "ANTHROPIC_API_KEY), or run `openvaala login`.");
  }
  auto slash = model.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == model.size())
    throw ModelError(ModelError::Kind::Config, "The model '" + model + "' must be written '<provider>/<model name>'.");
  const std::string provider_id = model.substr(0, slash);
  ResolvedModel out;
  out.model = model.substr(slash + 1);
  if (auto it = cfg.providers.find(provider_id); it != cfg.providers.end()) {
    out.provider = it->second;
  } else if (provider_id == "openai" || provider_id == "anthropic") {
    out.provider = builtin_provider(provider_id);
  } else {
    throw ModelError(ModelError::Kind::Config, "The model '" + model + "' names provider '" + provider_id +
                                                   "', which is not defined under 'providers' in " + cfg.file.string() +
                                                   " (built-in providers: openai, anthropic).");
  }
  // The key: $api_key_env when set and non-empty, else credentials.yaml (`openvaala login`).
  if (!out.provider.api_key_env.empty()) {
    out.api_key = env(out.provider.api_key_env);
    if (!out.api_key.empty()) out.api_key_source = "$" + out.provider.api_key_env;
  }
  if (out.api_key.empty()) {
    if (auto stored = stored_api_key(cfg, provider_id)) {
      out.api_key = std::move(*stored);
      out.api_key_source = config::credentials_file(cfg.file.parent_path()).string();
    }
  }
  config::remember_secret(out.api_key);
  const bool key_required = out.provider.api_type == "anthropic" ||
                            out.provider.base_url.find("api.openai.com") != std::string::npos;
  if (out.api_key.empty() && key_required)
    throw ModelError(ModelError::Kind::Auth, missing_key_message(provider_id, out.provider));
  return out;
}

}  // namespace runtime::providers
