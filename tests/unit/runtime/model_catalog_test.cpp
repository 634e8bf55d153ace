// The model picker's values: configured `models:` lists, models endpoint answers, the current
// model first.
#include "runtime/providers/model_catalog.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>

#include "runtime/providers/model_provider.hpp"

namespace {

using namespace runtime;
using namespace runtime::providers;
using Strings = std::vector<std::string>;

config::MainConfig two_providers() {
  config::MainConfig cfg;
  config::ProviderConfig listed;
  listed.id = "main";
  listed.api_type = "openai";
  listed.models = Strings{"gpt-4.1", "gpt-4.1-mini"};
  cfg.providers["main"] = listed;
  config::ProviderConfig unlisted;
  unlisted.id = "zeta";
  unlisted.api_type = "anthropic";
  cfg.providers["zeta"] = unlisted;
  return cfg;
}

TEST(ModelCatalogFetch, StopEndsTheRetriesAtOnce) {
  boost::asio::io_context io;
  config::MainConfig cfg;
  config::ProviderConfig dead;
  dead.id = "dead";
  dead.api_type = "openai";
  dead.base_url = "http://127.0.0.1:9/v1";  // nothing listens on the discard port
  dead.api_key_env = "OV_CATALOG_TEST_KEY";
  ::setenv("OV_CATALOG_TEST_KEY", "sk-test", 1);
  cfg.providers["dead"] = dead;
  ModelCatalog catalog(io.get_executor());
  catalog.fetch_missing(cfg);
  io.run_for(std::chrono::milliseconds(300));
  ASSERT_FALSE(io.stopped()) << "premise: a failed fetch waits to try again";
  catalog.stop();
  io.run_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(io.stopped()) << "after stop() no retry keeps the executor busy: the agent of a disconnected editor winds down";
}

TEST(ModelChoices, CurrentFirstThenEveryConfiguredModelOnce) {
  auto cfg = two_providers();
  EXPECT_EQ(model_choices(cfg, "main/gpt-4.1-mini", {}), (Strings{"main/gpt-4.1-mini", "main/gpt-4.1"}))
      << "the current model comes first and is not offered twice";
  EXPECT_EQ(model_choices(cfg, "openai/gpt-5", {}), (Strings{"openai/gpt-5", "main/gpt-4.1", "main/gpt-4.1-mini"}))
      << "the current model is always an option, even when no provider lists it";
}

TEST(ModelChoices, ProvidersWithoutModelsOfferWhatTheirEndpointListed) {
  auto cfg = two_providers();
  std::map<std::string, Strings> fetched{{"zeta", {"claude-a", "claude-b"}}, {"main", {"ignored"}}};
  EXPECT_EQ(model_choices(cfg, "main/gpt-4.1", fetched),
            (Strings{"main/gpt-4.1", "main/gpt-4.1-mini", "zeta/claude-a", "zeta/claude-b"}))
      << "a fetched list fills in for a provider without models:, never replaces a configured one";
  EXPECT_EQ(model_choices(cfg, "", {}), (Strings{"main/gpt-4.1", "main/gpt-4.1-mini"}));
}

TEST(ModelList, ParsesDataIdsOfOpenAiAndAnthropicAnswers) {
  EXPECT_EQ(parse_model_list(R"({"object":"list","data":[{"id":"gpt-4.1","object":"model"},{"id":"o3"}]})"),
            (Strings{"gpt-4.1", "o3"}));
  EXPECT_EQ(parse_model_list(R"({"data":[{"type":"model","id":"claude-sonnet-4","display_name":"x"}],"has_more":false})"),
            (Strings{"claude-sonnet-4"}));
  EXPECT_EQ(parse_model_list(R"({"data":[{"id":""},{"name":"x"},7]})"), Strings{}) << "entries without an id are skipped";
  EXPECT_FALSE(parse_model_list("<html>")) << "an answer that is not a models list is no list";
  EXPECT_FALSE(parse_model_list(R"({"error":{"message":"no"}})"));
}

TEST(ModelList, EndpointsFollowTheWireFormat) {
  EXPECT_EQ(make_openai_chat_format()->models_endpoint("http://h/v1"), "http://h/v1/models");
  EXPECT_EQ(make_anthropic_messages_format()->models_endpoint("https://api.anthropic.com"), "https://api.anthropic.com/v1/models");
  EXPECT_EQ(make_anthropic_messages_format()->models_endpoint("http://h/v1"), "http://h/v1/models");
}

TEST(ModelCost, UncachedInputCachedInputAndOutputAtTheirPricePerMillionTokens) {
  config::ModelPrice price;
  price.input = 2.0;
  price.output = 8.0;
  price.cached_input = 0.5;
  EXPECT_DOUBLE_EQ(cost_of(Usage{1000, 100, 400}, price), (600 * 2.0 + 400 * 0.5 + 100 * 8.0) / 1e6);
  price.cached_input.reset();
  EXPECT_DOUBLE_EQ(cost_of(Usage{1000, 100, 400}, price), (1000 * 2.0 + 100 * 8.0) / 1e6)
      << "without cached_input, cached tokens cost what input costs";
}

}  // namespace
