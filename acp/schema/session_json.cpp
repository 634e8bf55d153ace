#include "acp/schema/session.hpp"

#include <filesystem>

namespace acp::schema {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {
std::string absolute_path(const Reader& r) {
  auto p = r.string();
  if (!fs::path(p).is_absolute()) r.fail("must be an absolute path, got '" + p + "'");
  return p;
}

std::vector<std::string> absolute_paths(const std::optional<Reader>& r) {
  std::vector<std::string> out;
  if (!r) return out;
  for (std::size_t i = 0; i < r->array().size(); ++i) out.push_back(absolute_path(r->at(i)));
  return out;
}

void read_setup(const Reader& r, SessionSetup& out) {
  out.cwd = absolute_path(r.required("cwd"));
  out.additionalDirectories = absolute_paths(r.field("additionalDirectories"));
  out.systemPrompt = r.get_optional<SystemPrompt>("systemPrompt");
  if (auto servers = r.field("mcpServers")) out.mcpServers = servers->as<std::vector<McpServer>>();
  out.meta = r.lenient_object("_meta");
  if (out.meta)  // `_meta.openvaala.executor` is checked here, read by executor()
    if (const auto* ov = out.meta->if_contains("openvaala"); ov && ov->is_object())
      if (auto ex = Reader(*ov, "_meta.openvaala").field("executor")) ex->string();
}

void put_setup(json::object& o, const SessionSetup& s) {
  o["cwd"] = s.cwd;
  if (!s.additionalDirectories.empty()) o["additionalDirectories"] = json::value_from(s.additionalDirectories, o.storage());
  o["mcpServers"] = json::value_from(s.mcpServers, o.storage());
  if (s.systemPrompt)
    o["systemPrompt"] = json::object{{"mode", s.systemPrompt->mode}, {"content", json::value_from(s.systemPrompt->content, o.storage())}};
  put_meta(o, s.meta);
}
}  // namespace

std::string SessionSetup::executor() const {
  if (!meta) return {};
  const auto* ov = meta->if_contains("openvaala");
  const auto* ex = ov && ov->is_object() ? ov->as_object().if_contains("executor") : nullptr;
  return ex && ex->is_string() ? std::string(ex->as_string()) : std::string();
}

void require_directories(const SessionSetup& s) {
  std::error_code ec;
  if (!fs::is_directory(s.cwd, ec)) throw invalid_params("cwd is not a directory: " + s.cwd);
  for (std::size_t i = 0; i < s.additionalDirectories.size(); ++i)
    if (!fs::is_directory(s.additionalDirectories[i], ec))
      throw invalid_params("additionalDirectories[" + std::to_string(i) + "] is not a directory: " + s.additionalDirectories[i]);
}

// Refused (-32602) rather than half applied, as the schema asks.
void read(const Reader& r, SystemPrompt& out) {
  out.mode = r.get<std::string>("mode");
  if (out.mode != "append" && out.mode != "override")
    r.required("mode").fail("'" + out.mode + "' is not supported (available: append, override)");
  auto content = r.required("content");
  if (content.array().empty()) content.fail("must not be empty");
  out.content = content.as<std::vector<ContentBlock>>();
  for (std::size_t i = 0; i < out.content.size(); ++i)
    if (!std::holds_alternative<TextContent>(out.content[i].value))
      content.at(i).fail(std::string("takes text blocks only, got a ") + out.content[i].type() + " block");
}

void read(const Reader& r, NewSessionRequest& out) { read_setup(r, out); }

void read(const Reader& r, LoadSessionRequest& out) {
  read_setup(r, out);
  out.sessionId = r.get<std::string>("sessionId");
}

void read(const Reader& r, SessionRef& out) { out.sessionId = r.get<std::string>("sessionId"); }

void read(const Reader& r, SetSessionTitleRequest& out) { out = {r.get<std::string>("sessionId"), r.get<std::string>("title")}; }

void read(const Reader& r, ListSessionsRequest& out) {
  if (auto cwd = r.field("cwd")) out.cwd = absolute_path(*cwd);
  out.cursor = r.get_optional<std::string>("cursor");
  if (auto a = r.get_optional<std::string>("archived")) {
    if (*a != "exclude" && *a != "include" && *a != "only")
      r.required("archived").fail("'" + *a + "' is not a filter (available: exclude, include, only)");
    out.archived = *a;
  }
}

void read(const Reader& r, SessionInfo& out) {
  out = {r.get<std::string>("sessionId"), r.get<std::string>("cwd"), r.get_optional<std::string>("title"),
         r.get_optional<std::string>("updatedAt"), r.get_optional<bool>("archived").value_or(false)};
}

void read(const Reader& r, ListSessionsResponse& out) {
  out = {r.get<std::vector<SessionInfo>>("sessions"), r.get_optional<std::string>("nextCursor")};
}

void tag_invoke(json::value_from_tag, json::value& jv, const SessionSetup& s) {
  json::object o(jv.storage());
  put_setup(o, s);
  jv = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& jv, const LoadSessionRequest& s) {
  json::object o(jv.storage());
  o["sessionId"] = s.sessionId;
  put_setup(o, s);
  jv = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& jv, const NewSessionResponse& r) {
  json::object o(jv.storage());
  o["modes"] = json::value_from(r.modes, o.storage());
  o["configOptions"] = json::value_from(r.configOptions, o.storage());
  put_if(o, "sessionId", r.sessionId);
  jv = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& jv, const SetSessionTitleResponse& r) { jv = json::object{{"title", r.title}}; }

void tag_invoke(json::value_from_tag, json::value& jv, const SessionInfo& s) {
  json::object o(jv.storage());
  o["sessionId"] = s.sessionId;
  o["cwd"] = s.cwd;
  o["archived"] = s.archived;
  put_if(o, "title", s.title);
  put_if(o, "updatedAt", s.updatedAt);
  jv = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& jv, const ListSessionsResponse& r) {
  json::object o(jv.storage());
  o["sessions"] = json::value_from(r.sessions, o.storage());
  put_if(o, "nextCursor", r.nextCursor);
  jv = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& jv, const SessionStatusResponse& r) { jv = json::object{{"status", r.status}}; }

}  // namespace acp::schema
