#include "acp/schema/content.hpp"

namespace acp::schema {

namespace json = boost::json;

namespace {
template <class T>
void read_common(const Reader& r, T& out) {
  out.annotations = r.lenient_object("annotations");
  out.meta = r.lenient_object("_meta");
}

template <class T>
void put_common(json::object& o, const T& b) {
  put_if(o, "annotations", b.annotations);
  put_meta(o, b.meta);
}

void read(const Reader& r, ResourceContents& out) {
  out.uri = r.get<std::string>("uri");
  out.mimeType = r.get_optional<std::string>("mimeType");
  out.text = r.get_optional<std::string>("text");
  out.blob = r.get_optional<std::string>("blob");
  if (!out.text && !out.blob) r.fail("must hold `text` or `blob`");
  out.meta = r.lenient_object("_meta");
}

json::object to_json(const ResourceContents& c) {
  json::object o{{"uri", c.uri}};
  put_if(o, "mimeType", c.mimeType);
  put_if(o, "text", c.text);
  put_if(o, "blob", c.blob);
  put_meta(o, c.meta);
  return o;
}

struct Writer {
  json::object& o;
  void operator()(const TextContent& b) { o["text"] = b.text; put_common(o, b); }
  void operator()(const ImageContent& b) {
    o["data"] = b.data;
    o["mimeType"] = b.mimeType;
    put_if(o, "uri", b.uri);
    put_common(o, b);
  }
  void operator()(const AudioContent& b) {
    o["data"] = b.data;
    o["mimeType"] = b.mimeType;
    put_common(o, b);
  }
  void operator()(const ResourceLink& b) {
    o["uri"] = b.uri;
    o["name"] = b.name;
    put_if(o, "title", b.title);
    put_if(o, "description", b.description);
    put_if(o, "mimeType", b.mimeType);
    put_if(o, "size", b.size);
    put_common(o, b);
  }
  void operator()(const EmbeddedResource& b) {
    o["resource"] = to_json(b.resource);
    put_common(o, b);
  }
};
}  // namespace

const char* ContentBlock::type() const {
  static constexpr const char* kTypes[] = {"text", "image", "audio", "resource_link", "resource"};
  return kTypes[value.index()];
}

void read(const Reader& r, ContentBlock& out) {
  const std::string type = r.get<std::string>("type");
  if (type == "text") {
    TextContent b{r.get<std::string>("text"), {}, {}};
    read_common(r, b);
    out.value = std::move(b);
  } else if (type == "image") {
    ImageContent b{r.get<std::string>("data"), r.get<std::string>("mimeType"), r.get_optional<std::string>("uri"), {}, {}};
    read_common(r, b);
    out.value = std::move(b);
  } else if (type == "audio") {
    AudioContent b{r.get<std::string>("data"), r.get<std::string>("mimeType"), {}, {}};
    read_common(r, b);
    out.value = std::move(b);
  } else if (type == "resource_link") {
    ResourceLink b{r.get<std::string>("uri"), r.get<std::string>("name"), r.get_optional<std::string>("title"),
                   r.get_optional<std::string>("description"), r.get_optional<std::string>("mimeType"),
                   r.get_optional<std::int64_t>("size"), {}, {}};
    read_common(r, b);
    out.value = std::move(b);
  } else if (type == "resource") {
    EmbeddedResource b;
    read(r.required("resource"), b.resource);
    read_common(r, b);
    out.value = std::move(b);
  } else {
    r.required("type").fail("'" + type + "' is not supported");
  }
}

void tag_invoke(json::value_from_tag, json::value& jv, const ContentBlock& b) {
  json::object o(jv.storage());
  o["type"] = b.type();
  std::visit(Writer{o}, b.value);
  jv = std::move(o);
}

ContentBlock tag_invoke(json::value_to_tag<ContentBlock>, const json::value& jv) { return Reader(jv).as<ContentBlock>(); }

}  // namespace acp::schema
