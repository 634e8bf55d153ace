#include "acp/schema/config.hpp"

namespace acp::schema {

namespace json = boost::json;

void tag_invoke(json::value_from_tag, json::value& jv, const SessionMode& m) {
  json::object o(jv.storage());
  o["id"] = m.id;
  o["name"] = m.name;
  put_if(o, "description", m.description);
  jv = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& jv, const SessionModeState& s) {
  jv = json::object{{"currentModeId", s.currentModeId}, {"availableModes", json::value_from(s.availableModes, jv.storage())}};
}

void tag_invoke(json::value_from_tag, json::value& jv, const SessionConfigSelectOption& o) {
  json::object out(jv.storage());
  out["value"] = o.value;
  out["name"] = o.name;
  put_if(out, "description", o.description);
  jv = std::move(out);
}

void tag_invoke(json::value_from_tag, json::value& jv, const SessionConfigOption& o) {
  json::object out(jv.storage());
  out["id"] = o.id;
  out["name"] = o.name;
  put_if(out, "description", o.description);
  out["type"] = "select";
  out["currentValue"] = o.currentValue;
  out["options"] = json::value_from(o.options, out.storage());
  put_if(out, "category", o.category);
  jv = std::move(out);
}

void tag_invoke(json::value_from_tag, json::value& jv, const SetSessionConfigOptionResponse& r) {
  jv = json::object{{"configOptions", json::value_from(r.configOptions, jv.storage())}};
}

void read(const Reader& r, SessionMode& out) {
  out = {r.get<std::string>("id"), r.get<std::string>("name"), r.get_optional<std::string>("description")};
}

void read(const Reader& r, SessionModeState& out) {
  out = {r.get<std::string>("currentModeId"), r.get<std::vector<SessionMode>>("availableModes")};
}

void read(const Reader& r, SessionConfigSelectOption& out) {
  out = {r.get<std::string>("value"), r.get<std::string>("name"), r.get_optional<std::string>("description")};
}

void read(const Reader& r, SessionConfigOption& out) {
  if (auto type = r.get<std::string>("type"); type != "select") r.required("type").fail("'" + type + "' is not supported");
  out = {r.get<std::string>("id"),           r.get<std::string>("name"),
         r.get_optional<std::string>("description"), r.get_optional<std::string>("category"),
         r.get<std::string>("currentValue"), r.get<std::vector<SessionConfigSelectOption>>("options")};
}

void read(const Reader& r, SetSessionModeRequest& out) { out = {r.get<std::string>("sessionId"), r.get<std::string>("modeId")}; }

void read(const Reader& r, SetSessionConfigOptionRequest& out) {
  out = {r.get<std::string>("sessionId"), r.get<std::string>("configId"), r.get<std::string>("value")};
}

void read(const Reader& r, SetSessionModelRequest& out) { out = {r.get<std::string>("sessionId"), r.get<std::string>("modelId")}; }

}  // namespace acp::schema
