#pragma once
// The conversation in a provider-neutral form: what the agent loop keeps, what providers
// translate to their wire formats, and what the session store writes.
#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace runtime {

struct ImagePart {
  std::string mime_type;
  std::string data_base64;
};

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text, as the model produced it
};

struct Message {
  enum class Role { User, Assistant, Tool };
  Role role = Role::User;
  // User / assistant: the editor's messageId of its chunks (text and reasoning of one answer
  // share it), journaled so that session/load shows the same ids. Empty in older journals.
  std::string id;
  std::string text;               // user / assistant text, or a tool result
  std::vector<ImagePart> images;  // user images
  std::string reasoning;          // assistant reasoning (shown, not sent back)
  std::vector<ToolCall> tool_calls;
  std::string tool_call_id;       // Tool: which call this answers
  bool is_error = false;          // Tool: the call failed
};

struct ToolSpec {
  std::string name;
  std::string description;
  boost::json::object parameters;  // JSON Schema of the input
};

struct Usage {
  std::int64_t input_tokens = 0;         // all of the input, cached or not
  std::int64_t output_tokens = 0;
  std::int64_t cached_input_tokens = 0;  // the part of the input read from the provider's cache
  Usage& operator+=(const Usage& u) {
    input_tokens += u.input_tokens;
    output_tokens += u.output_tokens;
    cached_input_tokens += u.cached_input_tokens;
    return *this;
  }
};

enum class FinishReason { Stop, ToolUse, MaxTokens, Refusal };

}  // namespace runtime
