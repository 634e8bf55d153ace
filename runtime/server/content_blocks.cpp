#include "runtime/server/content_blocks.hpp"

namespace runtime::server {

namespace schema = acp::schema;

namespace {
// Moves the strings: a prompt may be most of a 200 MiB message.
struct ToPart {
  UserPrompt::Part operator()(schema::TextContent& b) const { return UserPrompt::Text{std::move(b.text)}; }
  UserPrompt::Part operator()(schema::ImageContent& b) const {
    return UserPrompt::Image{std::move(b.mimeType), std::move(b.data), b.uri.value_or("")};
  }
  UserPrompt::Part operator()(schema::AudioContent& b) const { return UserPrompt::Audio{std::move(b.mimeType), std::move(b.data)}; }
  UserPrompt::Part operator()(schema::ResourceLink& b) const {
    return UserPrompt::ResourceLink{std::move(b.uri), std::move(b.name), b.title, b.description, b.mimeType, b.size};
  }
  UserPrompt::Part operator()(schema::EmbeddedResource& b) const {
    auto& r = b.resource;
    const bool text = r.text.has_value();  // a text resource; else a binary one
    return UserPrompt::Resource{std::move(r.uri), r.mimeType, std::move(r.text), text ? std::nullopt : std::move(r.blob)};
  }
};
}  // namespace

UserPrompt user_prompt_from(std::vector<schema::ContentBlock> blocks) {
  UserPrompt prompt;
  prompt.parts.reserve(blocks.size());
  for (auto& b : blocks) prompt.parts.push_back(std::visit(ToPart{}, b.value));
  return prompt;
}

}  // namespace runtime::server
