#include "runtime/config/main_config.hpp"
#include "runtime/config/paths.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

namespace {

namespace fs = std::filesystem;
using runtime::config::Diagnostics;

fs::path write_config(const std::string& name, const std::string& yaml) {
  auto dir = fs::temp_directory_path() / ("ov-main-config-" + name + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "config.yaml") << yaml;
  return dir;
}

TEST(MainConfig, MissingFileMeansDefaults) {
  Diagnostics d;
  auto cfg = runtime::config::load_main_config("/nonexistent-ov-dir", d);
  EXPECT_TRUE(d.empty());
  EXPECT_FALSE(cfg.model);
  EXPECT_EQ(cfg.max_turn_requests, 100);
  EXPECT_EQ(cfg.mcp_startup_wait, std::chrono::milliseconds(500));
  EXPECT_EQ(cfg.mcp_limits.output_bytes, 100'000u) << "an MCP result reaches the model cut at ~25k tokens by default";
  EXPECT_EQ(cfg.mcp_limits.tools_per_server, 500u);
}

TEST(MainConfig, ReadsModelProvidersAndLimits) {
  auto dir = write_config("ok",
                          "model: main/gpt-4.1\n"
                          "providers:\n"
                          "  main:\n"
                          "    api_type: openai\n"
                          "    base_url: http://127.0.0.1:1/v1/\n"
                          "    api_key_env: K\n"
                          "    max_retries: 0\n"
                          "max_turn_requests: 7\n"
                          "mcp_startup_wait_ms: 2500\n"
                          "max_mcp_output_bytes: 2000\n"
                          "max_mcp_tools_per_server: 3\n"
                          "plugins:\n"
                          "  disabled: [a, b]\n");
  Diagnostics d;
  auto cfg = runtime::config::load_main_config(dir, d);
  EXPECT_TRUE(d.empty()) << d.front().to_string();
  EXPECT_EQ(*cfg.model, "main/gpt-4.1");
  EXPECT_EQ(cfg.providers.at("main").base_url, "http://127.0.0.1:1/v1");
  EXPECT_EQ(cfg.providers.at("main").max_retries, 0);
  EXPECT_EQ(cfg.max_turn_requests, 7);
  EXPECT_EQ(cfg.mcp_startup_wait, std::chrono::milliseconds(2500));
  EXPECT_EQ(cfg.mcp_limits.output_bytes, 2000u);
  EXPECT_EQ(cfg.mcp_limits.tools_per_server, 3u);
  EXPECT_EQ(cfg.plugins_disabled, (std::vector<std::string>{"a", "b"}));
}

TEST(MainConfig, ErrorsNameFileLineAndWhatIsAllowed) {
  auto dir = write_config("bad",
                          "model: gpt\n"
                          "providers:\n"
                          "  main:\n"
                          "    api_type: gemini\n"
                          "colour: blue\n");
  Diagnostics d;
  runtime::config::load_main_config(dir, d);
  ASSERT_EQ(d.size(), 3u);
  const auto file = (dir / "config.yaml").string();
  EXPECT_EQ(d[0].to_string(), file + ":5: unknown key 'colour' in config.yaml (allowed: model, providers, skills, plugins, default_agent, default_executor, max_turn_requests, mcp_startup_wait_ms, max_mcp_output_bytes, max_mcp_tools_per_server, sandbox)");
  EXPECT_EQ(d[1].to_string(), file + ":1: model must be '<provider id>/<model name>', got 'gpt'");
  EXPECT_EQ(d[2].to_string(), file + ":4: provider 'main': api_type must be 'openai' or 'anthropic', not 'gemini'");
}

TEST(MainConfig, InvalidYamlIsReportedWithItsLine) {
  auto dir = write_config("yaml", "model: a/b\nproviders: [unclosed\n");
  Diagnostics d;
  runtime::config::load_main_config(dir, d);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].line, 3);
  EXPECT_NE(d[0].message.find("invalid YAML"), std::string::npos);
}

TEST(MainConfig, ProviderModelsListIsRead) {
  auto dir = write_config("models",
                          "model: main/gpt-4.1\n"
                          "providers:\n"
                          "  main:\n"
                          "    api_type: openai\n"
                          "    models: [gpt-4.1, gpt-4.1-mini, meta/llama-3]\n"
                          "  other:\n"
                          "    api_type: anthropic\n");
  Diagnostics d;
  auto cfg = runtime::config::load_main_config(dir, d);
  EXPECT_TRUE(d.empty()) << d.front().to_string();
  ASSERT_TRUE(cfg.providers.at("main").models) << "a provider's models: list is read";
  EXPECT_EQ(*cfg.providers.at("main").models, (std::vector<std::string>{"gpt-4.1", "gpt-4.1-mini", "meta/llama-3"}));
  EXPECT_FALSE(cfg.providers.at("other").models) << "no models: means the models endpoint is asked";
}

TEST(MainConfig, AModelsEntryMayCarryAPricePerMillionTokens) {
  auto dir = write_config("prices",
                          "model: main/gpt-4.1\n"
                          "providers:\n"
                          "  main:\n"
                          "    api_type: openai\n"
                          "    models:\n"
                          "      - gpt-4.1-mini\n"
                          "      - id: gpt-4.1\n"
                          "        price: {input: 2, output: 8.5, cached_input: 0.5, currency: EUR}\n"
                          "      - id: o3\n"
                          "        price: {input: 1, output: 4}\n");
  Diagnostics d;
  auto cfg = runtime::config::load_main_config(dir, d);
  EXPECT_TRUE(d.empty()) << d.front().to_string();
  const auto& p = cfg.providers.at("main");
  EXPECT_EQ(*p.models, (std::vector<std::string>{"gpt-4.1-mini", "gpt-4.1", "o3"})) << "both forms name a model";
  ASSERT_EQ(p.prices.size(), 2u) << "an unpriced model has no price";
  EXPECT_DOUBLE_EQ(p.prices.at("gpt-4.1").output, 8.5);
  EXPECT_EQ(p.prices.at("gpt-4.1").cached_input, 0.5);
  EXPECT_EQ(p.prices.at("gpt-4.1").currency, "EUR");
  EXPECT_EQ(p.prices.at("o3").currency, "USD") << "the currency defaults to USD";
  EXPECT_FALSE(p.prices.at("o3").cached_input);
}

TEST(MainConfig, ProviderModelsProblemsNameFileAndLine) {
  auto dir = write_config("models-bad",
                          "model: main/a\n"
                          "providers:\n"
                          "  main:\n"
                          "    api_type: openai\n"
                          "    models:\n"
                          "      - a\n"
                          "      - ''\n"
                          "      - a\n"
                          "      - {x: 1}\n"
                          "  other:\n"
                          "    api_type: openai\n"
                          "    models: gpt-4.1\n");
  Diagnostics d;
  auto cfg = runtime::config::load_main_config(dir, d);
  const auto file = (dir / "config.yaml").string();
  ASSERT_EQ(d.size(), 5u) << "every bad models: entry is reported";
  EXPECT_EQ(d[0].to_string(), file + ":7: provider 'main': every entry of models must be a non-empty model name");
  EXPECT_EQ(d[1].to_string(), file + ":8: warning: provider 'main': model 'a' is listed twice in models")
      << "a model listed twice is harmless: a warning, the configuration still loads";
  EXPECT_EQ(d[2].to_string(), file + ":9: unknown key 'x' in provider 'main': a models entry (allowed: id, price)");
  EXPECT_EQ(d[3].to_string(), file + ":9: provider 'main': a models entry written as a mapping needs 'id: <model name>'");
  EXPECT_EQ(d[4].to_string(), file + ":12: provider 'other': models must be a list of model names");
  EXPECT_EQ(*cfg.providers.at("main").models, std::vector<std::string>{"a"}) << "the good entries are kept";
}

}  // namespace

// DESIGN §4: where OpenVaala keeps its files when no OPENVAALA_*_DIR says otherwise.
namespace {
// Sets (or, with nullptr, unsets) one variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};
}  // namespace

TEST(ConfigPaths, TheConfigRootFollowsOpenvaalaThenXdgThenHome) {
  using runtime::config::config_root_from;
  auto env_of = [](std::map<std::string, std::string> vars) {
    return [vars](const char* name) { auto it = vars.find(name); return it == vars.end() ? std::string() : it->second; };
  };
  EXPECT_EQ(config_root_from(env_of({{"OPENVAALA_CONFIG_DIR", "/o"}, {"XDG_CONFIG_HOME", "/x"}, {"HOME", "/h"}})), "/o");
  EXPECT_EQ(config_root_from(env_of({{"XDG_CONFIG_HOME", "/x"}, {"HOME", "/h"}})), "/x/openvaala")
      << "$XDG_CONFIG_HOME/openvaala, not $XDG_CONFIG_HOME itself";
  EXPECT_EQ(config_root_from(env_of({{"HOME", "/h"}})), "/h/.config/openvaala");
  EXPECT_EQ(config_root_from(env_of({})), "/.config/openvaala");
}

TEST(ConfigPaths, DataAndCacheFollowOpenvaalaThenXdgThenHome) {
  ScopedEnv no_data("OPENVAALA_DATA_DIR", nullptr), no_cache("OPENVAALA_CACHE_DIR", nullptr), home("HOME", "/h");
  {
    ScopedEnv data("XDG_DATA_HOME", "/xd"), cache("XDG_CACHE_HOME", "/xc");
    EXPECT_EQ(runtime::config::data_dir(), "/xd/openvaala");
    EXPECT_EQ(runtime::config::cache_dir(), "/xc/openvaala");
  }
  ScopedEnv data("XDG_DATA_HOME", nullptr), cache("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(runtime::config::data_dir(), "/h/.local/share/openvaala");
  EXPECT_EQ(runtime::config::cache_dir(), "/h/.cache/openvaala");
  ScopedEnv own_data("OPENVAALA_DATA_DIR", "/od"), own_cache("OPENVAALA_CACHE_DIR", "/oc");
  EXPECT_EQ(runtime::config::data_dir(), "/od");
  EXPECT_EQ(runtime::config::cache_dir(), "/oc");
}
