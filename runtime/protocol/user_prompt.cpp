#include "runtime/protocol/user_prompt.hpp"

namespace runtime {

namespace {
struct ToMessage {
  Message& m;
  void append(std::string_view text) {
    if (!m.text.empty()) m.text += "\n";
    m.text.append(text);
  }
  void operator()(const UserPrompt::Text& t) { append(t.text); }
  void operator()(const UserPrompt::Image& i) { m.images.push_back({i.mime_type, i.data_base64}); }
  void operator()(const UserPrompt::Audio&) { append("(an audio clip was attached; this agent cannot hear audio)"); }
  void operator()(const UserPrompt::ResourceLink& l) { append("[@" + l.name + "](" + l.uri + ")"); }
  void operator()(const UserPrompt::Resource& r) {
    if (r.text) append("<context ref=\"" + r.uri + "\">\n" + *r.text + "\n</context>");
    else append("[@" + r.uri + "](" + r.uri + ") (binary content not shown)");
  }
};
}  // namespace

Message user_message_from(const UserPrompt& prompt) {
  Message m;
  m.role = Message::Role::User;
  ToMessage to{m};
  for (const auto& part : prompt.parts) std::visit(to, part);
  return m;
}

}  // namespace runtime
