// acp/schema session/prompt, initialize and the pickers' requests.
#include "acp/schema/config.hpp"
#include "acp/schema/initialize.hpp"
#include "acp/schema/prompt.hpp"

#include "schema_test_util.hpp"

namespace {

using namespace acp::schema;
using schema_test::decode;
using schema_test::decode_error;
namespace json = boost::json;

TEST(SchemaPrompt, RequestRoundTrips) {
  auto req = decode<PromptRequest>(
      R"({"sessionId":"s","prompt":[{"type":"text","text":"hi"},{"type":"resource_link","uri":"u","name":"n"}],"later":{}})");
  ASSERT_EQ(req.prompt.size(), 2u);
  EXPECT_STREQ(req.prompt[1].type(), "resource_link");
  schema_test::round_trip(req);
}

TEST(SchemaPrompt, BadPromptNamesTheBlock) {
  EXPECT_EQ(decode_error<PromptRequest>(R"({"sessionId":"s","prompt":[]})"),
            "Invalid params: prompt must hold at least one content block");
  EXPECT_EQ(decode_error<PromptRequest>(R"({"sessionId":"s"})"), "Invalid params: prompt is required");
  EXPECT_EQ(decode_error<PromptRequest>(R"({"sessionId":"s","prompt":[{"type":"text","text":"a"},{"type":"text","text":7}]})"),
            "Invalid params: prompt[1].text must be a string");
  EXPECT_EQ(decode_error<PromptRequest>(R"({"sessionId":"s","prompt":["hi"]})"), "Invalid params: prompt[0] must be an object");
}

TEST(SchemaPrompt, ResponseOmitsAbsentUsage) {
  PromptResponse r{"end_turn", std::nullopt};
  EXPECT_EQ(json::value_from(r), json::parse(R"({"stopReason":"end_turn"})"));
  r.usage = Usage{30, 20, 10, std::nullopt};
  EXPECT_EQ(schema_test::round_trip(r), json::parse(R"({"stopReason":"end_turn","usage":{"totalTokens":30,"inputTokens":20,"outputTokens":10}})"));
}

TEST(SchemaInitialize, RequestReadsCapabilitiesLeniently) {
  auto req = decode<InitializeRequest>(
      R"({"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true},"terminal":"yes"},"clientInfo":{"name":"zed","version":"1"}})");
  EXPECT_EQ(req.protocolVersion, 1);
  EXPECT_TRUE(req.clientCapabilities.fs_read);
  EXPECT_FALSE(req.clientCapabilities.terminal) << "a malformed flag reads as not advertised";
  ASSERT_TRUE(req.clientInfo);
  EXPECT_EQ(req.clientInfo->name, "zed");
  EXPECT_FALSE(decode<InitializeRequest>(R"({"protocolVersion":1,"clientInfo":"zed"})").clientInfo);
  EXPECT_EQ(decode_error<InitializeRequest>(R"({})"), "Invalid params: protocolVersion is required");
  EXPECT_EQ(decode_error<InitializeRequest>(R"({"protocolVersion":"1"})"), "Invalid params: protocolVersion must be an integer");
}

TEST(SchemaInitialize, ResponseShape) {
  InitializeResponse r;
  r.agentCapabilities.loadSession = true;
  r.agentCapabilities.sessionCapabilities = {"list"};
  r.agentCapabilities.systemPromptModes = {"override"};
  r.agentCapabilities.auth = {"logout"};
  r.authMethods.push_back({"a", "A", std::nullopt, std::nullopt, {}});
  r.authMethods.push_back({"t", "T", "d", "terminal", {"login"}});
  r.agentInfo = {"openvaala", "OpenVaala", "1.0"};
  auto v = json::value_from(r);
  EXPECT_EQ(v.at("agentCapabilities").at("sessionCapabilities"),
            json::parse(R"({"list":{},"systemPrompt":{"mode":{"override":{}}}})"));
  EXPECT_EQ(v.at("agentCapabilities").at("auth"), json::parse(R"({"logout":{}})"));
  EXPECT_EQ(v.at("authMethods"), json::parse(R"([{"id":"a","name":"A"},{"type":"terminal","id":"t","name":"T","description":"d","args":["login"]}])"));
  EXPECT_EQ(v.at("agentInfo"), json::parse(R"({"name":"openvaala","title":"OpenVaala","version":"1.0"})"));
}

TEST(SchemaConfig, RequestsAndOptionsRoundTrip) {
  EXPECT_EQ(decode<SetSessionConfigOptionRequest>(R"({"sessionId":"s","configId":"model","value":"m"})").value, "m");
  EXPECT_EQ(decode_error<SetSessionConfigOptionRequest>(R"({"sessionId":"s","configId":"model","value":true})"),
            "Invalid params: value must be a string");
  EXPECT_EQ(decode_error<SetSessionModeRequest>(R"({"sessionId":"s"})"), "Invalid params: modeId is required");
  EXPECT_EQ(decode<SetSessionModelRequest>(R"({"sessionId":"s","modelId":"p/m"})").modelId, "p/m");
  SessionConfigOption o{"model", "Model", "which", "model", "a", {{"a", "a", std::nullopt}, {"b", "B", "bee"}}};
  auto v = schema_test::round_trip(o);
  EXPECT_EQ(v, json::parse(R"({"id":"model","name":"Model","description":"which","type":"select","currentValue":"a",
                               "options":[{"value":"a","name":"a"},{"value":"b","name":"B","description":"bee"}],"category":"model"})"));
  SessionModeState modes{"ask", {{"ask", "Ask", std::nullopt}}};
  schema_test::round_trip(modes);
}

}  // namespace
