#include "runtime/sessions/prompt_record.hpp"

namespace runtime::sessions {

namespace json = boost::json;

namespace {
template <class T>
void put_if(json::object& o, std::string_view key, const std::optional<T>& v) {
  if (v) o[key] = *v;
}

struct ToRecord {
  json::object operator()(const UserPrompt::Text& t) const { return {{"type", "text"}, {"text", t.text}}; }
  json::object operator()(const UserPrompt::Image& i) const {
    json::object o{{"type", "image"}, {"mimeType", i.mime_type}, {"data", i.data_base64}};
    if (!i.uri.empty()) o["uri"] = i.uri;
    return o;
  }
  json::object operator()(const UserPrompt::Audio& a) const {
    return {{"type", "audio"}, {"mimeType", a.mime_type}, {"data", a.data_base64}};
  }
  json::object operator()(const UserPrompt::ResourceLink& l) const {
    json::object o{{"type", "resource_link"}, {"uri", l.uri}, {"name", l.name}};
    put_if(o, "title", l.title);
    put_if(o, "description", l.description);
    put_if(o, "mimeType", l.mime_type);
    put_if(o, "size", l.size);
    return o;
  }
  json::object operator()(const UserPrompt::Resource& r) const {
    json::object res{{"uri", r.uri}};
    put_if(res, "mimeType", r.mime_type);
    put_if(res, "text", r.text);
    put_if(res, "blob", r.blob_base64);
    return {{"type", "resource"}, {"resource", std::move(res)}};
  }
};
}  // namespace

json::array prompt_record(const UserPrompt& prompt) {
  json::array out;
  out.reserve(prompt.parts.size());
  for (const auto& part : prompt.parts) out.push_back(std::visit(ToRecord{}, part));
  return out;
}

}  // namespace runtime::sessions
