// The replay's fast reading of the three records that make up most of a long session (prompts,
// answers, tool calls): their text is taken from the line as the JSON it was written as, checked
// but not decoded (support::raw_json), and handed on that way (JournalChunk, JournalToolCall).
// Anything not in the form the server writes falls back to the record parser, which decides.
#include <algorithm>

#include "runtime/sessions/detail.hpp"
#include "support/raw_json.hpp"

namespace runtime::sessions::detail {

namespace raw = support::raw_json;

namespace {

bool is_string(std::string_view json) { return json.size() >= 2 && json.front() == '"'; }

// A JSON string without escapes, as its text (for names and ids compared as text).
std::optional<std::string_view> plain_string(std::string_view json) {
  if (!is_string(json) || json.find('\\') != std::string_view::npos) return std::nullopt;
  return json.substr(1, json.size() - 2);
}

// The messageId the editor saw live (see message_id in session_replay.cpp): the message's id, or
// one from its line for a journal from before message ids.
std::string message_id_json(std::string_view id, std::uint32_t line_no) {
  if (is_string(id) && id != "\"\"") return std::string(id);
  return "\"msg_line" + std::to_string(line_no) + "\"";
}

// The line's `message` and `prompt` members as JSON text; false when it is not one valid object.
bool read_message(std::string_view line, std::string_view& message, std::string_view& prompt) {
  return raw::for_each_member(line, [&](std::string_view key, std::string_view value) {
    if (key == "message") message = value;
    else if (key == "prompt") prompt = value;
    return true;
  });
}

}  // namespace

bool journal_user(std::string_view line, std::uint32_t line_no, std::vector<JournalChunk>& out) {
  std::string_view message, prompt;
  if (!read_message(line, message, prompt) || message.empty() || message.front() != '{') return false;
  if (prompt.empty() || prompt.front() != '[') return false;  // no prompt blocks: the message's text and images
  std::string_view id;
  raw::for_each_member(message, [&](std::string_view key, std::string_view value) {
    if (key == "id") id = value;
    return true;
  });
  const std::string mid = message_id_json(id, line_no);
  std::vector<JournalChunk> blocks;
  raw::for_each_element(prompt, [&](std::string_view block) {
    if (block.front() == '{') blocks.push_back(JournalChunk{JournalChunk::Kind::User, std::string(block), mid});
    return true;
  });
  if (blocks.empty()) return false;  // an empty prompt: the message's text and images
  for (auto& b : blocks) out.push_back(std::move(b));
  return true;
}

bool journal_assistant(std::string_view line, std::uint32_t line_no, std::vector<JournalChunk>& out) {
  std::string_view message, prompt;
  if (!read_message(line, message, prompt) || message.empty() || message.front() != '{') return false;
  std::string_view id, text, reasoning;
  bool plain = true;
  raw::for_each_member(message, [&](std::string_view key, std::string_view value) {
    if (key == "id") id = value;
    else if (key == "text") text = value;
    else if (key == "reasoning") reasoning = value;
    else return true;
    plain = plain && is_string(value);
    return true;
  });
  if (!plain) return false;
  const std::string mid = message_id_json(id, line_no);
  if (!reasoning.empty() && reasoning != "\"\"")
    out.push_back(JournalChunk{JournalChunk::Kind::Thought, std::string(reasoning), mid});
  if (!text.empty() && text != "\"\"") out.push_back(JournalChunk{JournalChunk::Kind::Agent, std::string(text), mid});
  return true;
}

bool journal_tool_call(std::string_view line, JournalToolCall& out) {
  const auto& names = JournalToolCall::kFields;
  bool usable = raw::for_each_member(line, [&](std::string_view key, std::string_view value) {
    if (key == "toolCallId") {
      const auto id = plain_string(value);
      if (!id || id->empty()) return false;
      out.id = std::string(*id);
      return true;
    }
    const auto field = std::find(names.begin(), names.end(), key);
    if (field == names.end()) return true;  // the type, the time
    // Names the editor must know: only the ones the protocol has.
    if (key == "kind" || key == "status") {
      const auto name = plain_string(value);
      if (!name || !(key == "kind" ? tool_kind_from_name(*name).has_value() : tool_status_from_name(*name).has_value()))
        return false;
    } else if ((key == "title" || key == "name") && !is_string(value)) {
      return false;
    } else if ((key == "locations" || key == "content") && value.front() != '[') {
      return false;
    }
    out.json[static_cast<std::size_t>(field - names.begin())] = std::string(value);
    return true;
  });
  return usable && !out.id.empty();
}

ToolCallFields decoded_fields(const JournalToolCall& call, LineParser& parser) {
  std::string line = R"({"type":"tool_call","toolCallId":")" + call.id + "\"";
  for (std::size_t i = 0; i < call.json.size(); ++i)
    if (!call.json[i].empty()) line += ",\"" + std::string(JournalToolCall::kFields[i]) + "\":" + call.json[i];
  line += "}";
  return std::get<ToolCallState>(parser.parse(line).body).fields;
}

}  // namespace runtime::sessions::detail
