#include "acp/schema/prompt.hpp"

namespace acp::schema {

namespace json = boost::json;

void read(const Reader& r, PromptRequest& out) {
  out.sessionId = r.get<std::string>("sessionId");
  auto prompt = r.required("prompt");
  if (prompt.array().empty()) prompt.fail("must hold at least one content block");
  out.prompt = prompt.as<std::vector<ContentBlock>>();
  out.meta = r.lenient_object("_meta");
  out.messageId = r.get_optional<std::string>("messageId");
}

void read(const Reader& r, Usage& out) {
  out = {r.get<std::int64_t>("totalTokens"), r.get<std::int64_t>("inputTokens"), r.get<std::int64_t>("outputTokens"),
         r.get_optional<std::int64_t>("cachedReadTokens")};
}

void read(const Reader& r, PromptResponse& out) {
  out = {r.get<std::string>("stopReason"), r.get_optional<Usage>("usage"), r.get_optional<std::string>("userMessageId")};
}

void tag_invoke(json::value_from_tag, json::value& jv, const PromptRequest& p) {
  json::object o(jv.storage());
  o["sessionId"] = p.sessionId;
  o["prompt"] = json::value_from(p.prompt, o.storage());
  put_meta(o, p.meta);
  put_if(o, "messageId", p.messageId);
  jv = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& jv, const Usage& u) {
  json::object o(jv.storage());
  o["totalTokens"] = u.totalTokens;
  o["inputTokens"] = u.inputTokens;
  o["outputTokens"] = u.outputTokens;
  put_if(o, "cachedReadTokens", u.cachedReadTokens);
  jv = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& jv, const PromptResponse& p) {
  json::object o(jv.storage());
  o["stopReason"] = p.stopReason;
  put_if(o, "usage", p.usage);
  put_if(o, "userMessageId", p.userMessageId);
  jv = std::move(o);
}

}  // namespace acp::schema
