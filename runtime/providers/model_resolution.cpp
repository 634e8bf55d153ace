#include <cstdlib>

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

}  // namespace

ResolvedModel resolve_model(const config::MainConfig& cfg, const std::optional<std::string>& model_override) {
  std::string model = model_override.value_or("");
  if (model.empty()) model = env("OPENVAALA_MODEL");
  if (model.empty() && cfg.model) model = *cfg.model;
  if (model.empty()) {
    throw ModelError(ModelError::Kind::Config,
                     "No model is configured. Set 'model: <provider>/<model>' with a provider in " + cfg.file.string() +
                         ", or set OPENVAALA_MODEL=openai/<model> with OPENAI_API_KEY (or anthropic/<model> with "
                         "ANTHROPIC_API_KEY).");
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
  if (!out.provider.api_key_env.empty()) {
    out.api_key = env(out.provider.api_key_env);
    if (out.api_key.empty() && out.provider.api_type == "anthropic")
      throw ModelError(ModelError::Kind::Auth, "The provider '" + provider_id + "' needs an API key: set $" +
                                                   out.provider.api_key_env + ".");
    if (out.api_key.empty() && out.provider.base_url.find("api.openai.com") != std::string::npos)
      throw ModelError(ModelError::Kind::Auth, "The provider '" + provider_id + "' needs an API key: set $" +
                                                   out.provider.api_key_env + ".");
  }
  return out;
}

}  // namespace runtime::providers
