#include "acp/schema/initialize.hpp"

#include "support/json_read.hpp"

namespace acp::schema {

namespace json = boost::json;
using support::bool_at;
using support::obj_at;

ClientCapabilities ClientCapabilities::from_json(const json::value& caps) {
  ClientCapabilities c;
  if (!caps.is_object()) return c;
  const auto& o = caps.as_object();
  if (auto* fs = obj_at(o, "fs")) {
    c.fs_read = bool_at(*fs, "readTextFile");
    c.fs_write = bool_at(*fs, "writeTextFile");
  }
  c.terminal = bool_at(o, "terminal");
  if (auto* auth = obj_at(o, "auth")) c.auth_terminal = bool_at(*auth, "terminal");
  // Before auth.terminal: `_meta["terminal-auth"]: true` (Zed then, the ACP Registry's checks now).
  if (auto* meta = obj_at(o, "_meta"); meta && bool_at(*meta, "terminal-auth")) c.auth_terminal = true;
  c.subagents = obj_at(o, "subagents") != nullptr;
  // `{}` advertises the view; omitted, null or anything else does not.
  if (auto* session = obj_at(o, "session")) {
    c.notices = obj_at(*session, "notices") != nullptr;
    c.compaction = obj_at(*session, "compaction") != nullptr;
  }
  if (auto* e = obj_at(o, "elicitation")) {
    c.elicitation_form = obj_at(*e, "form") != nullptr;
    c.elicitation_url = obj_at(*e, "url") != nullptr;
  }
  return c;
}

void read(const Reader& r, Implementation& out) {
  out = {r.get<std::string>("name"), r.get_optional<std::string>("title"), r.get_optional<std::string>("version")};
}

void read(const Reader& r, InitializeRequest& out) {
  // We speak version 1 and answer 1 to any version asked: the client decides whether it can continue.
  out.protocolVersion = r.get<std::int64_t>("protocolVersion");
  if (auto caps = r.field("clientCapabilities")) out.clientCapabilities = ClientCapabilities::from_json(caps->value());
  // clientInfo is default-on-error: a malformed one reads as absent.
  if (auto info = r.lenient_object("clientInfo"); info && info->contains("name") && info->at("name").is_string())
    out.clientInfo = Implementation{std::string(info->at("name").as_string()), {}, {}};
}

void read(const Reader& r, AuthenticateRequest& out) { out.methodId = r.get<std::string>("methodId"); }

void tag_invoke(json::value_from_tag, json::value& jv, const Implementation& i) {
  json::object o(jv.storage());
  o["name"] = i.name;
  put_if(o, "title", i.title);
  put_if(o, "version", i.version);
  jv = std::move(o);
}

namespace {
json::object flags(const std::vector<std::string>& names) {
  json::object o;
  for (const auto& n : names) o[n] = json::object{};
  return o;
}
}  // namespace

void tag_invoke(json::value_from_tag, json::value& jv, const AgentCapabilities& c) {
  json::object session = flags(c.sessionCapabilities);
  if (!c.systemPromptModes.empty()) session["systemPrompt"] = json::object{{"mode", flags(c.systemPromptModes)}};
  jv = json::object{
      {"loadSession", c.loadSession},
      {"promptCapabilities", json::object{{"image", c.promptCapabilities.image},
                                          {"audio", c.promptCapabilities.audio},
                                          {"embeddedContext", c.promptCapabilities.embeddedContext}}},
      {"mcpCapabilities",
       json::object{{"http", c.mcpCapabilities.http}, {"sse", c.mcpCapabilities.sse}, {"acp", c.mcpCapabilities.acp}}},
      {"sessionCapabilities", std::move(session)},
      {"auth", flags(c.auth)},
  };
}

void tag_invoke(json::value_from_tag, json::value& jv, const AuthMethod& m) {
  json::object o(jv.storage());
  put_if(o, "type", m.type);
  o["id"] = m.id;
  o["name"] = m.name;
  put_if(o, "description", m.description);
  if (m.type) o["args"] = json::value_from(m.args, o.storage());
  jv = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& jv, const InitializeResponse& r) {
  json::object o{{"protocolVersion", r.protocolVersion},
                 {"agentCapabilities", json::value_from(r.agentCapabilities)},
                 {"authMethods", json::value_from(r.authMethods)},
                 {"agentInfo", json::value_from(r.agentInfo)}};
  put_meta(o, r.meta);
  jv = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& jv, const AuthStatus& s) {
  json::object o(jv.storage());
  o["state"] = s.state;
  if (!s.accounts.empty()) {
    json::array a;
    for (const auto& acc : s.accounts) a.push_back(json::object{{"label", acc.label}, {"active", acc.active}});
    o["accounts"] = std::move(a);
  }
  jv = std::move(o);
}

}  // namespace acp::schema
