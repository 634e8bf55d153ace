// Wire formats: request bodies and stream decoding for OpenAI Chat Completions and Anthropic
// Messages, fed the same SSE bytes the real APIs send.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "runtime/providers/model_provider.hpp"

namespace {

namespace json = boost::json;
using namespace runtime;
using namespace runtime::providers;

std::vector<Message> sample_conversation() {
  std::vector<Message> m(4);
  m[0].role = Message::Role::User;
  m[0].text = "fix it";
  m[1].role = Message::Role::Assistant;
  m[1].text = "Reading.";
  m[1].tool_calls = {{"call_1", "read_file", R"({"path":"a.txt"})"}};
  m[2].role = Message::Role::Tool;
  m[2].tool_call_id = "call_1";
  m[2].text = "contents";
  m[3].role = Message::Role::User;
  m[3].text = "thanks";
  return m;
}

ModelRequest sample_request(const std::vector<Message>& conv) {
  ModelRequest r;
  r.model = "m1";
  r.system = "be brief";
  r.messages = &conv;
  r.tools = {{"read_file", "Read a file", json::object{{"type", "object"}}}};
  return r;
}

struct Streamed {
  std::string text, reasoning;
};

ModelResponse decode(const WireFormat& fmt, std::string_view sse, Streamed& seen) {
  auto dec = fmt.decoder();
  bridge::http::SseDecoder sse_dec;
  std::vector<bridge::http::SseEvent> events;
  sse_dec.feed(sse, events);
  sse_dec.finish(events);
  ModelResponse out;
  StreamCallbacks cb{[&](std::string_view t) { seen.text += t; }, [&](std::string_view t) { seen.reasoning += t; }, nullptr};
  for (const auto& e : events) dec->on_event(e, out, cb);
  dec->finish(out);
  return out;
}

TEST(OpenAiChat, RequestBody) {
  auto fmt = make_openai_chat_format();
  auto conv = sample_conversation();
  auto body = json::parse(fmt->body(sample_request(conv), std::nullopt));
  EXPECT_EQ(fmt->endpoint("http://h/v1"), "http://h/v1/chat/completions");
  EXPECT_EQ(body.at("stream"), true);
  const auto& msgs = body.at("messages").as_array();
  ASSERT_EQ(msgs.size(), 5u);
  EXPECT_EQ(msgs[0], json::parse(R"({"role":"system","content":"be brief"})"));
  EXPECT_EQ(msgs[2], json::parse(R"({"role":"assistant","content":"Reading.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}}]})"));
  EXPECT_EQ(msgs[3], json::parse(R"({"role":"tool","tool_call_id":"call_1","content":"contents"})"));
  EXPECT_EQ(body.at("tools").at(0).at("function").at("name"), "read_file");
  EXPECT_FALSE(body.as_object().contains("max_tokens"));
}

TEST(OpenAiChat, ReasoningEffortIsSentOnlyWhenPicked) {
  auto fmt = make_openai_chat_format();
  auto conv = sample_conversation();
  auto req = sample_request(conv);
  EXPECT_FALSE(json::parse(fmt->body(req, std::nullopt)).as_object().contains("reasoning_effort"))
      << "no thought level picked: no reasoning_effort (models without reasoning refuse it)";
  req.reasoning_effort = "high";
  EXPECT_EQ(json::parse(fmt->body(req, std::nullopt)).at("reasoning_effort"), "high")
      << "the thought level picked in the editor is OpenAI's reasoning_effort";
  EXPECT_FALSE(json::parse(make_anthropic_messages_format()->body(req, std::nullopt)).as_object().contains("reasoning_effort"));
}

TEST(OpenAiChat, StreamsTextReasoningAndToolCallsSplitAcrossDeltas) {
  auto fmt = make_openai_chat_format();
  const char* sse =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c9\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"command\\\":\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"ls\\\"}\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":7,\"total_tokens\":18}}\n\n"
      "data: [DONE]\n\n";
  Streamed seen;
  auto r = decode(*fmt, sse, seen);
  EXPECT_EQ(seen.text, "Hello");
  EXPECT_EQ(seen.reasoning, "hmm");
  EXPECT_EQ(r.text, "Hello");
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "c9");
  EXPECT_EQ(r.tool_calls[0].name, "bash");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"command":"ls"})");
  EXPECT_EQ(r.finish, FinishReason::ToolUse);
  EXPECT_EQ(r.usage.input_tokens, 11);
  EXPECT_EQ(r.usage.output_tokens, 7);
}

TEST(OpenAiChat, FinishReasonsMapToStopReasons) {
  auto fmt = make_openai_chat_format();
  Streamed seen;
  EXPECT_EQ(decode(*fmt, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n", seen).finish, FinishReason::MaxTokens);
  EXPECT_EQ(decode(*fmt, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\n", seen).finish, FinishReason::Refusal);
}

TEST(OpenAiChat, StreamCutShortIsAnError) {
  auto fmt = make_openai_chat_format();
  Streamed seen;
  try {
    decode(*fmt, "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n", seen);
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_EQ(e.kind(), ModelError::Kind::Network);
    EXPECT_STREQ(e.what(), "the model stream ended before the response was complete");
  }
}

TEST(AnthropicMessages, RequestBodyMergesToolResultsIntoUserTurns) {
  auto fmt = make_anthropic_messages_format();
  auto conv = sample_conversation();
  auto body = json::parse(fmt->body(sample_request(conv), 1234));
  EXPECT_EQ(fmt->endpoint("https://api.anthropic.com"), "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(fmt->endpoint("http://h/v1"), "http://h/v1/messages");
  EXPECT_EQ(body.at("max_tokens"), 1234);
  EXPECT_EQ(body.at("system"), "be brief");
  const auto& msgs = body.at("messages").as_array();
  ASSERT_EQ(msgs.size(), 3u);
  EXPECT_EQ(msgs[1], json::parse(R"({"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"call_1","name":"read_file","input":{"path":"a.txt"}}]})"));
  EXPECT_EQ(msgs[2], json::parse(R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"contents","is_error":false},{"type":"text","text":"thanks"}]})"));
  EXPECT_EQ(body.at("tools").at(0).at("input_schema"), json::parse(R"({"type":"object"})"));
}

TEST(AnthropicMessages, StreamsThinkingTextAndToolUse) {
  auto fmt = make_anthropic_messages_format();
  const char* sse =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":25}}}\n\n"
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"let me\"}}\n\n"
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"On it\"}}\n\n"
      "event: ping\ndata: {\"type\":\"ping\"}\n\n"
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"tu_1\",\"name\":\"read_file\",\"input\":{}}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\":\"}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"a\\\"}\"}}\n\n"
      "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  Streamed seen;
  auto r = decode(*fmt, sse, seen);
  EXPECT_EQ(seen.reasoning, "let me");
  EXPECT_EQ(seen.text, "On it");
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "tu_1");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"path":"a"})");
  EXPECT_EQ(r.finish, FinishReason::ToolUse);
  EXPECT_EQ(r.usage.input_tokens, 25);
  EXPECT_EQ(r.usage.output_tokens, 9);
}

TEST(AnthropicMessages, OverloadedErrorEventIsRetryable) {
  auto fmt = make_anthropic_messages_format();
  Streamed seen;
  try {
    decode(*fmt, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", seen);
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_TRUE(e.retryable());
    EXPECT_STREQ(e.what(), "the model stream reported an error: Overloaded");
  }
}

// Promise: Anthropic's stop reasons become the turn's stopReason, and a stream that ends without
// message_stop is an error the user sees, never a silently shortened answer.
TEST(AnthropicMessages, StopReasonsMapAndAStreamCutShortIsAnError) {
  auto fmt = make_anthropic_messages_format();
  auto stream_ending = [](const char* stop_reason) {
    return std::string("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"") +
           stop_reason + "\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  };
  Streamed seen;
  EXPECT_EQ(decode(*fmt, stream_ending("max_tokens"), seen).finish, FinishReason::MaxTokens)
      << "stop_reason max_tokens must end the turn with max_tokens";
  EXPECT_EQ(decode(*fmt, stream_ending("refusal"), seen).finish, FinishReason::Refusal);
  EXPECT_EQ(decode(*fmt, stream_ending("end_turn"), seen).finish, FinishReason::Stop);
  try {
    decode(*fmt,
           "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
           "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n",
           seen);
    FAIL() << "an Anthropic stream without message_stop must be an error, not a shortened answer";
  } catch (const ModelError& e) {
    EXPECT_EQ(e.kind(), ModelError::Kind::Network);
    EXPECT_STREQ(e.what(), "the model stream ended before the response was complete");
  }
}

TEST(ModelResolution, ConfiguredProviderAndModel) {
  config::MainConfig cfg;
  cfg.model = "local/qwen";
  config::ProviderConfig p;
  p.id = "local";
  p.api_type = "openai";
  p.base_url = "http://127.0.0.1:11434/v1";
  cfg.providers["local"] = p;
  auto r = resolve_model(cfg, std::nullopt);
  EXPECT_EQ(r.model, "qwen");
  EXPECT_EQ(r.provider.base_url, "http://127.0.0.1:11434/v1");
}

TEST(ModelResolution, UnknownProviderIsAClearError) {
  config::MainConfig cfg;
  cfg.file = "/cfg/config.yaml";
  try {
    resolve_model(cfg, std::string("nope/x"));
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_EQ(e.kind(), ModelError::Kind::Config);
    EXPECT_STREQ(e.what(), "The model 'nope/x' names provider 'nope', which is not defined under 'providers' in "
                           "/cfg/config.yaml (built-in providers: openai, anthropic).");
  }
  EXPECT_THROW(resolve_model(cfg, std::string("no-slash")), ModelError);
}

}  // namespace
