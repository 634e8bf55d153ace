// The session's config options: the model picker (category "model") next to mode and agent.
#include "runtime/server/config_options.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "../engine_test_util.hpp"

namespace {

namespace json = boost::json;
using namespace runtime;

const json::object* option(const json::array& options, std::string_view id) {
  for (const auto& o : options)
    if (o.as_object().at("id").as_string() == id) return &o.as_object();
  return nullptr;
}

std::vector<std::string> values(const json::object& option) {
  std::vector<std::string> out;
  for (const auto& o : option.at("options").as_array()) out.emplace_back(o.as_object().at("value").as_string());
  return out;
}

class ConfigOptions : public ::testing::Test {
 protected:
  Session session(const std::string& yaml) {
    tree_.write("config/config.yaml", yaml);
    config::Diagnostics d;
    Session s;
    s.id = "ses_1";
    s.settings.cwd = tree_.project();
    s.services.engine = tree_.load(d);
    EXPECT_TRUE(d.empty()) << engine_test::join(d);
    s.settings.agent_name = s.services.engine->default_agent();
    s.services.view = s.services.engine->session_view(s.settings.cwd, s.settings.agent_name);
    return s;
  }

  engine_test::Tree tree_;
  boost::asio::io_context io_;
  providers::ModelCatalog catalog_{io_.get_executor()};
};

constexpr const char* kTwoProviders =
    "model: main/gpt-4.1\n"
    "providers:\n"
    "  main:\n"
    "    api_type: openai\n"
    "    base_url: http://127.0.0.1:1/v1\n"
    "    models: [gpt-4.1-mini, gpt-4.1]\n"
    "  local:\n"
    "    api_type: openai\n"
    "    base_url: http://127.0.0.1:1/v1\n"
    "    models: [qwen]\n";

TEST_F(ConfigOptions, ModelPickerListsConfiguredModelsCurrentFirst) {
  auto s = session(kTwoProviders);
  auto options = server::config_options(s, catalog_);
  const auto* model = option(options, "model");
  ASSERT_TRUE(model) << "session/new offers a model option: " << json::serialize(options);
  EXPECT_EQ(model->at("category"), "model") << "Zed builds its model menu from the option of category model";
  EXPECT_EQ(model->at("type"), "select");
  EXPECT_EQ(model->at("currentValue"), "main/gpt-4.1");
  EXPECT_EQ(values(*model), (std::vector<std::string>{"main/gpt-4.1", "local/qwen", "main/gpt-4.1-mini"}))
      << "the current model first, then every configured provider's models";
  EXPECT_EQ(server::model_values(s, catalog_), values(*model));
}

TEST_F(ConfigOptions, PickedModelIsCurrentAndFirst) {
  auto s = session(kTwoProviders);
  s.settings.model = "local/qwen";
  auto options = server::config_options(s, catalog_);
  const auto* model = option(options, "model");
  ASSERT_TRUE(model);
  EXPECT_EQ(model->at("currentValue"), "local/qwen") << "the model picked in the editor is the current one";
  EXPECT_EQ(values(*model).front(), "local/qwen");
  EXPECT_EQ(s.model_override(), std::optional<std::string>("local/qwen")) << "the picked model wins over the agent's";
}

TEST_F(ConfigOptions, ThoughtLevelIsOfferedForOpenAiModelsOnly) {
  auto s = session(kTwoProviders);
  auto options = server::config_options(s, catalog_);
  const auto* level = option(options, "thought_level");
  ASSERT_TRUE(level) << "an OpenAI model offers a thought level: " << json::serialize(options);
  EXPECT_EQ(level->at("category"), "thought_level");
  EXPECT_EQ(level->at("currentValue"), "default") << "nothing picked: the model's default";
  EXPECT_EQ(values(*level), (std::vector<std::string>{"default", "low", "medium", "high"}));
  s.settings.reasoning_effort = "high";
  options = server::config_options(s, catalog_);
  EXPECT_EQ(option(options, "thought_level")->at("currentValue"), "high");

  auto a = session("model: claude/sonnet\nproviders:\n  claude:\n    api_type: anthropic\n    api_key_env: K\n");
  options = server::config_options(a, catalog_);
  EXPECT_FALSE(option(options, "thought_level")) << "reasoning_effort is OpenAI's: no thought level for Anthropic models";
  EXPECT_TRUE(server::thought_level_values(a).empty());
}

TEST_F(ConfigOptions, NoModelConfiguredMeansNoModelPicker) {
  auto s = session("max_turn_requests: 5\n");
  if (std::getenv("OPENVAALA_MODEL")) GTEST_SKIP() << "OPENVAALA_MODEL is set";
  auto options = server::config_options(s, catalog_);
  EXPECT_FALSE(option(options, "model")) << json::serialize(options);
  EXPECT_TRUE(option(options, "mode"));
}

}  // namespace
