#pragma once
// ACP ContentBlock (what a prompt is made of; also the content of session updates): text, image,
// audio, resource_link and resource (embedded text or blob). Wire-named fields; `meta` is `_meta`.
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "acp/schema/reader.hpp"

namespace acp::schema {

struct TextContent {
  std::string text;
  std::optional<boost::json::object> annotations;
  std::optional<boost::json::object> meta;
};

struct ImageContent {
  std::string data;  // base64
  std::string mimeType;
  std::optional<std::string> uri;
  std::optional<boost::json::object> annotations;
  std::optional<boost::json::object> meta;
};

struct AudioContent {
  std::string data;  // base64
  std::string mimeType;
  std::optional<boost::json::object> annotations;
  std::optional<boost::json::object> meta;
};

struct ResourceLink {
  std::string uri;
  std::string name;
  std::optional<std::string> title;
  std::optional<std::string> description;
  std::optional<std::string> mimeType;
  std::optional<std::int64_t> size;
  std::optional<boost::json::object> annotations;
  std::optional<boost::json::object> meta;
};

// EmbeddedResource.resource: text (TextResourceContents) or binary (BlobResourceContents).
struct ResourceContents {
  std::string uri;
  std::optional<std::string> mimeType;
  std::optional<std::string> text;  // set: a text resource
  std::optional<std::string> blob;  // base64, set: a binary resource
  std::optional<boost::json::object> meta;
};

struct EmbeddedResource {
  ResourceContents resource;
  std::optional<boost::json::object> annotations;
  std::optional<boost::json::object> meta;
};

struct ContentBlock {
  std::variant<TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource> value;
  const char* type() const;  // "text", "image", ...
};

void read(const Reader& r, ContentBlock& out);  // "<path>.type '<x>' is not supported" for other types
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const ContentBlock& b);
ContentBlock tag_invoke(boost::json::value_to_tag<ContentBlock>, const boost::json::value& jv);

}  // namespace acp::schema
