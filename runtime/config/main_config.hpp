#pragma once
// `<config root>/config.yaml`: the model, the providers and the agent loop's limits.
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/config/diagnostic.hpp"

namespace runtime::config {

// What a model costs, in `currency` per million tokens (`models:` entries of the map form).
struct ModelPrice {
  double input = 0;
  double output = 0;
  std::optional<double> cached_input;  // unset: cached input tokens cost `input`
  std::string currency = "USD";
};

struct ProviderConfig {
  std::string id;
  std::string api_type;     // "openai" | "anthropic"
  std::string base_url;
  std::string api_key_env;  // the NAME of the variable holding the key
  int max_retries = 4;
  int idle_timeout_seconds = 300;
  std::optional<int> max_output_tokens;
  std::optional<int> context_window;
  // `models:`, the names the model picker offers; unset: what the provider's models endpoint lists.
  std::optional<std::vector<std::string>> models;
  std::map<std::string, ModelPrice> prices;  // model name -> its price, for the models given one
};

inline constexpr std::chrono::milliseconds kDefaultMcpStartupWait{500};
// What MCP servers may put before the model (config.yaml max_mcp_output_bytes and
// max_mcp_tools_per_server). One large result or a huge tool list, in every later request,
// would otherwise end the session: the provider refuses the context.
struct McpLimits {
  std::size_t output_bytes = 100'000;  // of a tool result's text; ~25k tokens, Claude Code's default
  std::size_t tools_per_server = 500;
};
// `sandbox:`, for the commands the model runs on `local` (README "Sandbox"): on (the default) in
// every mode but Full auto, off, or always (Full auto too).
enum class SandboxSetting { On, Off, Always };

struct MainConfig {
  std::filesystem::path file;      // where it was read from (may not exist)
  std::optional<std::string> model;  // "<provider id>/<model name>"
  std::map<std::string, ProviderConfig> providers;
  std::optional<std::string> skills_directory;
  std::vector<std::string> plugins_disabled;
  std::optional<std::string> default_agent;
  std::optional<std::string> default_executor;  // an executor id (checked by the engine)
  int max_turn_requests = 100;
  // How long a turn's first model request waits for optional MCP servers still starting; one
  // that comes up later joins at a later model request (required servers are always waited for).
  std::chrono::milliseconds mcp_startup_wait = kDefaultMcpStartupWait;
  McpLimits mcp_limits;
  SandboxSetting sandbox = SandboxSetting::On;
};

// A missing file is not an error (everything has defaults). Problems are appended to `diags`
// with the file and line; fields that fail validation keep their defaults.
MainConfig load_main_config(const std::filesystem::path& config_root, Diagnostics& diags);

}  // namespace runtime::config
