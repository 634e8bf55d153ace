// OpenAI Chat Completions wire format (also Ollama, vLLM, llama.cpp, LM Studio, OpenRouter).
#include <map>

#include "support/json_read.hpp"
#include "runtime/providers/model_provider.hpp"

namespace runtime::providers {

namespace json = boost::json;
using support::arr_at;
using support::int_at;
using support::obj_at;
using support::str_at;

namespace {

json::value user_content(const Message& m) {
  if (m.images.empty()) return json::string(m.text);
  json::array parts;
  if (!m.text.empty()) parts.push_back(json::object{{"type", "text"}, {"text", m.text}});
  for (const auto& img : m.images)
    parts.push_back(json::object{
        {"type", "image_url"},
        {"image_url", json::object{{"url", "data:" + img.mime_type + ";base64," + img.data_base64}}}});
  return parts;
}

class OpenAiDecoder : public StreamDecoder {
 public:
  void on_event(const bridge::http::SseEvent& ev, ModelResponse& out, StreamCallbacks& cb) override {
    if (ev.data == "[DONE]") {
      done_ = true;
      return;
    }
    json::error_code ec;
    auto v = json::parse(ev.data, ec);
    if (ec || !v.is_object()) return;  // keep-alives and vendor noise
    const auto& o = v.as_object();
    if (auto* err = obj_at(o, "error"))
      throw ModelError(ModelError::Kind::Server, "the model stream reported an error: " + std::string(str_at(*err, "message", "unknown")));
    if (auto* usage = obj_at(o, "usage")) {
      out.usage.input_tokens = int_at(*usage, "prompt_tokens").value_or(out.usage.input_tokens);
      out.usage.output_tokens = int_at(*usage, "completion_tokens").value_or(out.usage.output_tokens);
      if (auto* details = obj_at(*usage, "prompt_tokens_details"))  // part of prompt_tokens
        out.usage.cached_input_tokens = int_at(*details, "cached_tokens").value_or(out.usage.cached_input_tokens);
    }
    auto* choices = arr_at(o, "choices");
    if (!choices || choices->empty() || !choices->front().is_object()) return;
    const auto& choice = choices->front().as_object();
    if (auto* delta = obj_at(choice, "delta")) {
      if (auto t = str_at(*delta, "content"); !t.empty()) {
        out.text.append(t);
        cb.on_text(t);
      }
      // Reasoning deltas: `reasoning_content` (DeepSeek, vLLM) or `reasoning` (OpenRouter, Ollama).
      auto r = str_at(*delta, "reasoning_content");
      if (r.empty()) r = str_at(*delta, "reasoning");
      if (!r.empty()) {
        out.reasoning.append(r);
        cb.on_reasoning(r);
      }
      if (auto* calls = arr_at(*delta, "tool_calls")) {
        for (const auto& c : *calls) {
          if (!c.is_object()) continue;
          const auto& call = c.as_object();
          auto index = int_at(call, "index").value_or(static_cast<std::int64_t>(partial_.size()));
          auto& p = partial_[index];
          if (auto id = str_at(call, "id"); !id.empty()) p.id = id;
          if (auto* fn = obj_at(call, "function")) {
            if (auto name = str_at(*fn, "name"); !name.empty()) p.name += name;
            p.arguments += str_at(*fn, "arguments");
          }
        }
      }
    }
    if (auto fr = str_at(choice, "finish_reason"); !fr.empty()) {
      finished_ = true;
      if (fr == "tool_calls" || fr == "function_call") out.finish = FinishReason::ToolUse;
      else if (fr == "length") out.finish = FinishReason::MaxTokens;
      else if (fr == "content_filter") out.finish = FinishReason::Refusal;
      else out.finish = FinishReason::Stop;
    }
  }

  void finish(ModelResponse& out) override {
    if (!done_ && !finished_)
      throw ModelError(ModelError::Kind::Network, "the model stream ended before the response was complete");
    int n = 0;
    for (auto& [_, p] : partial_) {
      if (p.name.empty()) continue;
      if (p.id.empty()) p.id = "call_" + std::to_string(n);
      if (p.arguments.empty()) p.arguments = "{}";
      out.tool_calls.push_back(std::move(p));
      ++n;
    }
    if (!out.tool_calls.empty() && out.finish == FinishReason::Stop) out.finish = FinishReason::ToolUse;
  }

 private:
  std::map<std::int64_t, ToolCall> partial_;
  bool done_ = false;
  bool finished_ = false;
};

class OpenAiChatFormat : public WireFormat {
 public:
  std::string endpoint(const std::string& base_url) const override { return base_url + "/chat/completions"; }
  std::string models_endpoint(const std::string& base_url) const override { return base_url + "/models"; }

  std::vector<std::pair<std::string, std::string>> headers(const std::string& api_key) const override {
    std::vector<std::pair<std::string, std::string>> h{{"content-type", "application/json"},
                                                       {"accept", "text/event-stream"}};
    if (!api_key.empty()) h.emplace_back("authorization", "Bearer " + api_key);
    return h;
  }

  std::string body(const ModelRequest& req, std::optional<int> max_output_tokens) const override {
    json::array messages;
    if (!req.system.empty()) messages.push_back(json::object{{"role", "system"}, {"content", req.system}});
    for (const auto& m : *req.messages) {
      switch (m.role) {
        case Message::Role::User:
          messages.push_back(json::object{{"role", "user"}, {"content", user_content(m)}});
          break;
        case Message::Role::Assistant: {
          json::object a{{"role", "assistant"}};
          a["content"] = m.text.empty() ? json::value(nullptr) : json::value(m.text);
          if (!m.tool_calls.empty()) {
            json::array calls;
            for (const auto& c : m.tool_calls)
              calls.push_back(json::object{{"id", c.id},
                                           {"type", "function"},
                                           {"function", json::object{{"name", c.name}, {"arguments", c.arguments}}}});
            a["tool_calls"] = std::move(calls);
          }
          messages.push_back(std::move(a));
          break;
        }
        case Message::Role::Tool:
          messages.push_back(json::object{{"role", "tool"}, {"tool_call_id", m.tool_call_id}, {"content", m.text}});
          break;
      }
    }
    json::object body{{"model", req.model},
                      {"stream", true},
                      {"stream_options", json::object{{"include_usage", true}}},
                      {"messages", std::move(messages)}};
    if (!req.tools.empty()) {
      json::array tools;
      for (const auto& t : req.tools)
        tools.push_back(json::object{
            {"type", "function"},
            {"function", json::object{{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}});
      body["tools"] = std::move(tools);
    }
    if (max_output_tokens) body["max_tokens"] = *max_output_tokens;
    if (!req.reasoning_effort.empty()) body["reasoning_effort"] = req.reasoning_effort;
    return json::serialize(body);
  }

  std::unique_ptr<StreamDecoder> decoder() const override { return std::make_unique<OpenAiDecoder>(); }

  std::string error_message(std::string_view body) const override {
    json::error_code ec;
    auto v = json::parse(body, ec);
    if (!ec && v.is_object()) {
      if (auto* err = obj_at(v.as_object(), "error")) return std::string(str_at(*err, "message"));
      if (auto m = str_at(v.as_object(), "message"); !m.empty()) return std::string(m);
    }
    return std::string(body.substr(0, 300));
  }
};

}  // namespace

std::unique_ptr<WireFormat> make_openai_chat_format() { return std::make_unique<OpenAiChatFormat>(); }

}  // namespace runtime::providers
