#include "runtime/server/content_blocks.hpp"

namespace runtime::server {

namespace schema = acp::schema;

namespace {
struct ToPart {
  UserPrompt::Part operator()(const schema::TextContent& b) const { return UserPrompt::Text{b.text}; }
  UserPrompt::Part operator()(const schema::ImageContent& b) const {
    return UserPrompt::Image{b.mimeType, b.data, b.uri.value_or("")};
  }
  UserPrompt::Part operator()(const schema::AudioContent& b) const { return UserPrompt::Audio{b.mimeType, b.data}; }
  UserPrompt::Part operator()(const schema::ResourceLink& b) const {
    return UserPrompt::ResourceLink{b.uri, b.name, b.title, b.description, b.mimeType, b.size};
  }
  UserPrompt::Part operator()(const schema::EmbeddedResource& b) const {
    const auto& r = b.resource;
    return UserPrompt::Resource{r.uri, r.mimeType, r.text, r.text ? std::nullopt : r.blob};
  }
};
}  // namespace

UserPrompt user_prompt_from(const std::vector<schema::ContentBlock>& blocks) {
  UserPrompt prompt;
  prompt.parts.reserve(blocks.size());
  for (const auto& b : blocks) prompt.parts.push_back(std::visit(ToPart{}, b.value));
  return prompt;
}

}  // namespace runtime::server
