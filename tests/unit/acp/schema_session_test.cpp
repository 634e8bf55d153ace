// acp/schema session lifecycle: session/new and its siblings share SessionSetup; each struct
// round-trips, bad input names its path, unknown fields are ignored.
#include "acp/schema/session.hpp"

#include <filesystem>

#include "schema_test_util.hpp"

namespace {

using namespace acp::schema;
using schema_test::decode;
using schema_test::decode_error;
namespace json = boost::json;

TEST(SchemaSession, NewSessionRequestDecodesEveryPart) {
  auto req = decode<NewSessionRequest>(R"({
    "cwd": "/work", "additionalDirectories": ["/lib", "/data"],
    "mcpServers": [{"name": "fs", "command": "mcp-fs"}],
    "systemPrompt": {"mode": "append", "content": [{"type": "text", "text": "Be brief."}]},
    "_meta": {"openvaala": {"executor": "box"}}, "somethingNew": 1})");
  EXPECT_EQ(req.cwd, "/work");
  EXPECT_EQ(req.additionalDirectories, (std::vector<std::string>{"/lib", "/data"}));
  ASSERT_EQ(req.mcpServers.size(), 1u);
  EXPECT_EQ(req.mcpServers[0].name(), "fs");
  ASSERT_TRUE(req.systemPrompt);
  EXPECT_EQ(req.systemPrompt->mode, "append");
  EXPECT_EQ(req.executor(), "box");
  schema_test::round_trip(req);
}

TEST(SchemaSession, NullListsReadAsEmpty) {
  auto req = decode<NewSessionRequest>(R"({"cwd":"/w","additionalDirectories":null,"mcpServers":null,"_meta":null})");
  EXPECT_TRUE(req.additionalDirectories.empty());
  EXPECT_TRUE(req.mcpServers.empty());
  EXPECT_EQ(req.executor(), "");
}

TEST(SchemaSession, LoadResumeForkShareTheSetup) {
  const char* text = R"({"sessionId":"ses_1","cwd":"/w","mcpServers":[],"additionalDirectories":["/x"]})";
  EXPECT_EQ(decode<LoadSessionRequest>(text).additionalDirectories, std::vector<std::string>{"/x"});
  EXPECT_EQ(decode<ResumeSessionRequest>(text).sessionId, "ses_1");
  EXPECT_EQ(decode<ForkSessionRequest>(text).cwd, "/w");
  schema_test::round_trip(decode<LoadSessionRequest>(text));
  EXPECT_EQ(decode_error<LoadSessionRequest>(R"({"cwd":"/w"})"), "Invalid params: sessionId is required");
}

TEST(SchemaSession, BadSetupNamesItsPath) {
  EXPECT_EQ(decode_error<NewSessionRequest>(R"({})"), "Invalid params: cwd is required");
  EXPECT_EQ(decode_error<NewSessionRequest>(R"(null)"), "Invalid params: cwd is required");
  EXPECT_EQ(decode_error<NewSessionRequest>(R"([])"), "Invalid params: params must be an object");
  EXPECT_EQ(decode_error<NewSessionRequest>(R"({"cwd":"rel"})"), "Invalid params: cwd must be an absolute path, got 'rel'");
  EXPECT_EQ(decode_error<NewSessionRequest>(R"({"cwd":"/w","additionalDirectories":["/a","b"]})"),
            "Invalid params: additionalDirectories[1] must be an absolute path, got 'b'");
  EXPECT_EQ(decode_error<NewSessionRequest>(R"({"cwd":"/w","additionalDirectories":"/a"})"),
            "Invalid params: additionalDirectories must be an array");
  EXPECT_EQ(decode_error<NewSessionRequest>(R"({"cwd":"/w","mcpServers":[{"name":"a","command":"c"},{"name":"b","command":"c"},{"name":"c","command":7}]})"),
            "Invalid params: mcpServers[2].command must be a string");
  EXPECT_EQ(decode_error<NewSessionRequest>(R"({"cwd":"/w","_meta":{"openvaala":{"executor":3}}})"),
            "Invalid params: _meta.openvaala.executor must be a string");
}

TEST(SchemaSession, SystemPromptIsTextOnlyAppendOrOverride) {
  EXPECT_EQ(decode_error<NewSessionRequest>(R"({"cwd":"/w","systemPrompt":{"mode":"prepend","content":[{"type":"text","text":"x"}]}})"),
            "Invalid params: systemPrompt.mode 'prepend' is not supported (available: append, override)");
  EXPECT_EQ(decode_error<NewSessionRequest>(R"({"cwd":"/w","systemPrompt":{"mode":"append","content":[]}})"),
            "Invalid params: systemPrompt.content must not be empty");
  EXPECT_EQ(decode_error<NewSessionRequest>(
                R"({"cwd":"/w","systemPrompt":{"mode":"append","content":[{"type":"image","data":"A","mimeType":"image/png"}]}})"),
            "Invalid params: systemPrompt.content[0] takes text blocks only, got a image block");
}

TEST(SchemaSession, RequireDirectoriesNamesTheEntry) {
  auto tmp = std::filesystem::temp_directory_path().string();
  SessionSetup ok;
  ok.cwd = tmp;
  ok.additionalDirectories = {tmp};
  EXPECT_NO_THROW(require_directories(ok));
  SessionSetup bad = ok;
  bad.additionalDirectories = {tmp, "/no/such/dir/openvaala"};
  try {
    require_directories(bad);
    ADD_FAILURE() << "a missing additional directory must be refused";
  } catch (const acp::RpcError& e) {
    EXPECT_EQ(std::string(e.what()), "Invalid params: additionalDirectories[1] is not a directory: /no/such/dir/openvaala");
  }
  bad = ok;
  bad.cwd = "/no/such/dir/openvaala";
  EXPECT_THROW(require_directories(bad), acp::RpcError);
}

TEST(SchemaSession, CatalogRequests) {
  auto list = decode<ListSessionsRequest>(R"({"cwd":"/w","cursor":"c1","archived":"only"})");
  EXPECT_EQ(list.cwd, "/w");
  EXPECT_EQ(list.archived, "only");
  EXPECT_EQ(decode<ListSessionsRequest>("null").archived, "exclude") << "no params: every field is optional";
  EXPECT_EQ(decode_error<ListSessionsRequest>(R"({"archived":"all"})"),
            "Invalid params: archived 'all' is not a filter (available: exclude, include, only)");
  EXPECT_EQ(decode_error<ListSessionsRequest>(R"({"cwd":"w"})"), "Invalid params: cwd must be an absolute path, got 'w'");
  EXPECT_EQ(decode<SetSessionTitleRequest>(R"({"sessionId":"s","title":"T"})").title, "T");
  EXPECT_EQ(decode_error<SessionRef>(R"({"sessionId":5})"), "Invalid params: sessionId must be a string");
  EXPECT_EQ(decode<CancelNotification>(R"({"sessionId":"s","x":1})").sessionId, "s");
}

TEST(SchemaSession, ResponsesRoundTripAndOmitAbsentFields) {
  NewSessionResponse r{std::nullopt, {"ask", {{"ask", "Ask", "asks first"}}}, {}};
  EXPECT_FALSE(json::value_from(r).as_object().contains("sessionId")) << "load and resume answer without a sessionId";
  r.sessionId = "ses_1";
  r.configOptions.push_back({"mode", "Mode", "d", "mode", "ask", {{"ask", "Ask", std::nullopt}}});
  auto v = json::value_from(r);
  EXPECT_EQ(v.at("sessionId"), "ses_1");
  EXPECT_EQ(v.at("configOptions").at(0).at("type"), "select");
  ListSessionsResponse list{{{"s", "/w", std::nullopt, "2026-01-01T00:00:00Z", false}}, std::nullopt};
  auto lv = schema_test::round_trip(list);
  EXPECT_FALSE(lv.as_object().contains("nextCursor"));
  EXPECT_FALSE(lv.at("sessions").at(0).as_object().contains("title")) << "absent optional fields are omitted, not null";
}

}  // namespace
