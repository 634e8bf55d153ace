#include "acp/schema/steering.hpp"

namespace acp::schema {

namespace json = boost::json;

void read(const Reader& r, SteeringRequest& out) {
  out.sessionId = r.get<std::string>("sessionId");
  auto prompt = r.required("prompt");
  if (prompt.array().empty()) prompt.fail("must hold at least one content block");
  out.prompt = prompt.as<std::vector<ContentBlock>>();
  out.messageId = r.get_optional<std::string>("messageId");
  auto meta = r.field("_meta");
  if (!meta || meta->value().is_null()) return;
  auto steering = meta->field("steering");
  if (!steering || steering->value().is_null()) return;
  if (auto idle = steering->get_optional<std::string>("idleBehavior")) out.promptRequired = *idle == "promptRequired";
}

void tag_invoke(json::value_from_tag, json::value& jv, const SteeringResponse& r) {
  json::object o(jv.storage());
  o["outcome"] = r.outcome;
  put_if(o, "reason", r.reason);
  jv = std::move(o);
}

}  // namespace acp::schema
