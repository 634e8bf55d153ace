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
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
};

enum class FinishReason { Stop, ToolUse, MaxTokens, Refusal };

}  // namespace runtime
