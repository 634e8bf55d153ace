#pragma once
// What the user sent with a prompt, in the engine's own words: the editor protocol's content
// blocks are decoded at the boundary (runtime/server), and the engine never sees ACP JSON.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runtime/protocol/conversation.hpp"

namespace runtime {

struct UserPrompt {
  struct Text {
    std::string text;
  };
  struct Image {
    std::string mime_type;
    std::string data_base64;
    std::string uri;  // where it came from; may be empty
  };
  struct Audio {
    std::string mime_type;
    std::string data_base64;
  };
  // A file or an MCP resource the user pointed at (read by the turn when an MCP server lists it).
  struct ResourceLink {
    std::string uri;
    std::string name;
    std::optional<std::string> title;
    std::optional<std::string> description;
    std::optional<std::string> mime_type;
    std::optional<std::int64_t> size;
  };
  // A resource whose contents came with the prompt: text, or binary (base64).
  struct Resource {
    std::string uri;
    std::optional<std::string> mime_type;
    std::optional<std::string> text;
    std::optional<std::string> blob_base64;
  };
  using Part = std::variant<Text, Image, Audio, ResourceLink, Resource>;

  std::vector<Part> parts;
  // The user message's id: the client's own (session/prompt `messageId`), else empty and made
  // when the turn starts; a rewind names the message by it.
  std::string message_id;
};

// The user message the model gets: the text parts, resources as context, links as markdown
// links; images as images; audio as a note that it cannot be heard.
Message user_message_from(const UserPrompt& prompt);

}  // namespace runtime
