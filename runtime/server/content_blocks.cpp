#include "runtime/server/content_blocks.hpp"

#include "acp/rpc_error.hpp"
#include "support/json_read.hpp"

namespace runtime::server {

namespace json = boost::json;
using support::obj_at;
using support::str_at;

Message user_message_from(const json::array& prompt) {
  if (prompt.empty()) throw acp::invalid_params("'prompt' must hold at least one content block");
  Message m;
  m.role = Message::Role::User;
  auto append = [&](std::string_view text) {
    if (!m.text.empty()) m.text += "\n";
    m.text.append(text);
  };
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    const std::string where = "prompt[" + std::to_string(i) + "]";
    if (!prompt[i].is_object()) throw acp::invalid_params(where + " must be an object");
    const auto& block = prompt[i].as_object();
    auto type = str_at(block, "type");
    if (type == "text") {
      auto* text = block.if_contains("text");
      if (!text || !text->is_string()) throw acp::invalid_params(where + ".text must be a string");
      append(text->as_string());
    } else if (type == "image") {
      m.images.push_back({std::string(str_at(block, "mimeType")), std::string(str_at(block, "data"))});
    } else if (type == "resource_link") {
      append("[@" + std::string(str_at(block, "name")) + "](" + std::string(str_at(block, "uri")) + ")");
    } else if (type == "resource") {
      if (auto* res = obj_at(block, "resource")) {
        auto uri = str_at(*res, "uri");
        if (res->contains("text"))
          append("<context ref=\"" + std::string(uri) + "\">\n" + std::string(str_at(*res, "text")) + "\n</context>");
        else
          append("[@" + std::string(uri) + "](" + std::string(uri) + ") (binary content not shown)");
      }
    } else if (type == "audio") {
      append("(an audio clip was attached; this agent cannot hear audio)");
    } else {
      throw acp::invalid_params(where + ".type '" + std::string(type) + "' is not supported");
    }
  }
  return m;
}

}  // namespace runtime::server
