#include "acp/schema/rewind.hpp"

namespace acp::schema {

namespace json = boost::json;

void read(const Reader& r, RewindRequest& out) {
  out.sessionId = r.get<std::string>("sessionId");
  if (auto id = r.get_optional<std::string>("messageId")) out.messageId = *id;
  else if (auto before = r.field("beforeMessage")) out.messageId = before->get<std::string>("messageId");
  else r.required("messageId");  // throws: "messageId is required"
  out.dryRun = r.get_optional<bool>("dryRun").value_or(false);
  out.force = r.get_optional<bool>("force").value_or(false);
}

void tag_invoke(json::value_from_tag, json::value& jv, const RewindResponse& r) {
  jv = json::object{{"rewound", r.rewound}, {"sessionId", r.sessionId}};
}

void tag_invoke(json::value_from_tag, json::value& jv, const RewoundFile& f) {
  json::object o(jv.storage());
  o["path"] = f.path;
  o["action"] = f.action;
  put_if(o, "error", f.error);
  jv = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& jv, const RewindFilesResponse& r) {
  json::object o(jv.storage());
  o["files"] = json::value_from(r.files, o.storage());
  o["dryRun"] = r.dryRun;
  put_if(o, "droppedCheckpoints", r.droppedCheckpoints);
  put_if(o, "note", r.note);
  jv = std::move(o);
}

}  // namespace acp::schema
