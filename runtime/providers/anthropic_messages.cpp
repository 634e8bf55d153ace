// Anthropic Messages wire format.
#include <map>

#include "support/json_read.hpp"
#include "runtime/providers/model_provider.hpp"

namespace runtime::providers {

namespace json = boost::json;
using support::int_at;
using support::obj_at;
using support::str_at;

namespace {

constexpr int kDefaultMaxTokens = 8192;

// Anthropic wants strictly alternating roles; tool results travel as user content blocks.
json::array to_messages(const std::vector<Message>& conversation) {
  json::array out;
  auto append = [&](const char* role, json::value block) {
    if (!out.empty() && out.back().as_object().at("role").as_string() == role) {
      out.back().as_object()["content"].as_array().push_back(std::move(block));
    } else {
      out.push_back(json::object{{"role", role}, {"content", json::array{std::move(block)}}});
    }
  };
  for (const auto& m : conversation) {
    switch (m.role) {
      case Message::Role::User:
        for (const auto& img : m.images)
          append("user", json::object{{"type", "image"},
                                      {"source", json::object{{"type", "base64"},
                                                              {"media_type", img.mime_type},
                                                              {"data", img.data_base64}}}});
        if (!m.text.empty()) append("user", json::object{{"type", "text"}, {"text", m.text}});
        break;
      case Message::Role::Assistant:
        if (!m.text.empty()) append("assistant", json::object{{"type", "text"}, {"text", m.text}});
        for (const auto& c : m.tool_calls) {
          json::error_code ec;
          auto input = json::parse(c.arguments, ec);
          if (ec || !input.is_object()) input = json::object{};
          append("assistant", json::object{{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", input}});
        }
        break;
      case Message::Role::Tool:
        append("user", json::object{{"type", "tool_result"},
                                    {"tool_use_id", m.tool_call_id},
                                    {"content", m.text},
                                    {"is_error", m.is_error}});
        break;
    }
  }
  return out;
}

class AnthropicDecoder : public StreamDecoder {
 public:
  void on_event(const bridge::http::SseEvent& ev, ModelResponse& out, StreamCallbacks& cb) override {
    json::error_code ec;
    auto v = json::parse(ev.data, ec);
    if (ec || !v.is_object()) return;
    const auto& o = v.as_object();
    std::string type(str_at(o, "type", ev.event));
    if (type == "message_start") {
      if (auto* msg = obj_at(o, "message"))
        if (auto* usage = obj_at(*msg, "usage")) {
          // Anthropic counts cache reads and writes apart from input_tokens; ours include them.
          out.usage.cached_input_tokens = int_at(*usage, "cache_read_input_tokens").value_or(0);
          out.usage.input_tokens = int_at(*usage, "input_tokens").value_or(0) + out.usage.cached_input_tokens +
                                   int_at(*usage, "cache_creation_input_tokens").value_or(0);
        }
    } else if (type == "content_block_start") {
      auto index = int_at(o, "index").value_or(0);
      if (auto* block = obj_at(o, "content_block"); block && str_at(*block, "type") == "tool_use") {
        auto& call = tools_[index];
        call.id = str_at(*block, "id");
        call.name = str_at(*block, "name");
      }
    } else if (type == "content_block_delta") {
      auto index = int_at(o, "index").value_or(0);
      auto* delta = obj_at(o, "delta");
      if (!delta) return;
      auto dtype = str_at(*delta, "type");
      if (dtype == "text_delta") {
        auto t = str_at(*delta, "text");
        out.text.append(t);
        cb.on_text(t);
      } else if (dtype == "thinking_delta") {
        auto t = str_at(*delta, "thinking");
        out.reasoning.append(t);
        cb.on_reasoning(t);
      } else if (dtype == "input_json_delta") {
        tools_[index].arguments += str_at(*delta, "partial_json");
      }
    } else if (type == "message_delta") {
      if (auto* delta = obj_at(o, "delta")) {
        auto reason = str_at(*delta, "stop_reason");
        if (reason == "tool_use") out.finish = FinishReason::ToolUse;
        else if (reason == "max_tokens") out.finish = FinishReason::MaxTokens;
        else if (reason == "refusal") out.finish = FinishReason::Refusal;
        else if (!reason.empty()) out.finish = FinishReason::Stop;
      }
      if (auto* usage = obj_at(o, "usage"))
        out.usage.output_tokens = int_at(*usage, "output_tokens").value_or(out.usage.output_tokens);
    } else if (type == "message_stop") {
      stopped_ = true;
    } else if (type == "error") {
      auto* err = obj_at(o, "error");
      std::string etype(err ? str_at(*err, "type") : "");
      std::string msg = "the model stream reported an error: " + std::string(err ? str_at(*err, "message", etype) : "unknown");
      throw ModelError(etype == "overloaded_error" || etype == "rate_limit_error" ? ModelError::Kind::RateLimit
                                                                                 : ModelError::Kind::Server,
                       msg);
    }
  }

  void finish(ModelResponse& out) override {
    if (!stopped_) throw ModelError(ModelError::Kind::Network, "the model stream ended before the response was complete");
    for (auto& [_, call] : tools_) {
      if (call.arguments.empty()) call.arguments = "{}";
      out.tool_calls.push_back(std::move(call));
    }
  }

 private:
  std::map<std::int64_t, ToolCall> tools_;
  bool stopped_ = false;
};

class AnthropicMessagesFormat : public WireFormat {
 public:
  std::string endpoint(const std::string& base_url) const override { return v1(base_url) + "/messages"; }
  std::string models_endpoint(const std::string& base_url) const override { return v1(base_url) + "/models"; }

  std::vector<std::pair<std::string, std::string>> headers(const std::string& api_key) const override {
    return {{"content-type", "application/json"},
            {"accept", "text/event-stream"},
            {"anthropic-version", "2023-06-01"},
            {"x-api-key", api_key}};
  }

  std::string body(const ModelRequest& req, std::optional<int> max_output_tokens) const override {
    json::object body{{"model", req.model},
                      {"max_tokens", max_output_tokens.value_or(kDefaultMaxTokens)},
                      {"stream", true},
                      {"messages", to_messages(*req.messages)}};
    if (!req.system.empty()) body["system"] = req.system;
    if (!req.tools.empty()) {
      json::array tools;
      for (const auto& t : req.tools)
        tools.push_back(json::object{{"name", t.name}, {"description", t.description}, {"input_schema", t.parameters}});
      body["tools"] = std::move(tools);
    }
    return json::serialize(body);
  }

  std::unique_ptr<StreamDecoder> decoder() const override { return std::make_unique<AnthropicDecoder>(); }

  // Accept base URLs given with or without the /v1 suffix.
  static std::string v1(const std::string& base_url) {
    if (base_url.size() >= 3 && base_url.compare(base_url.size() - 3, 3, "/v1") == 0) return base_url;
    return base_url + "/v1";
  }

  std::string error_message(std::string_view body) const override {
    json::error_code ec;
    auto v = json::parse(body, ec);
    if (!ec && v.is_object())
      if (auto* err = obj_at(v.as_object(), "error")) return std::string(str_at(*err, "message"));
    return std::string(body.substr(0, 300));
  }
};

}  // namespace

std::unique_ptr<WireFormat> make_anthropic_messages_format() { return std::make_unique<AnthropicMessagesFormat>(); }

}  // namespace runtime::providers
