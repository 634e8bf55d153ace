#include "acp/schema/mcp_server.hpp"

namespace acp::schema {

namespace json = boost::json;

namespace {
// [{name, value}] (the ACP shape), or a plain object.
NameValues read_name_values(const std::optional<Reader>& r) {
  NameValues out;
  if (!r) return out;
  if (r->value().is_object()) {
    for (const auto& [k, v] : r->object()) out.emplace_back(std::string(k), Reader(v, r->path() + "." + std::string(k)).string());
    return out;
  }
  if (!r->value().is_array()) r->fail("must be an array of {name, value}");
  for (std::size_t i = 0; i < r->array().size(); ++i) {
    auto e = r->at(i);
    if (!e.value().is_object()) e.fail("must be an object {name, value}");
    out.emplace_back(e.get<std::string>("name"), e.get<std::string>("value"));
  }
  return out;
}

json::array name_values_json(const NameValues& nv) {
  json::array a;
  for (const auto& [n, v] : nv) a.push_back(json::object{{"name", n}, {"value", v}});
  return a;
}

std::string non_empty(const Reader& r, std::string_view key) {
  auto s = r.get<std::string>(key);
  if (s.empty()) r.required(key).fail("must not be empty");
  return s;
}

McpServer::Type type_of(const Reader& r) {
  auto t = r.get_optional<std::string>("type");
  if (!t || *t == "stdio") return McpServer::Type::Stdio;
  if (*t == "http") return McpServer::Type::Http;
  if (*t == "sse") return McpServer::Type::Sse;
  if (*t == "acp") return McpServer::Type::Acp;
  r.required("type").fail("must be one of stdio, http, sse, acp; got '" + *t + "'");
}

constexpr const char* kTypeNames[] = {"stdio", "http", "sse", "acp"};
}  // namespace

const std::string& McpServer::name() const {
  return std::visit([](const auto& s) -> const std::string& { return s.name; }, value);
}

void read(const Reader& r, McpServer& out) {
  r.object();
  const std::string name = non_empty(r, "name");
  out.type = type_of(r);
  switch (out.type) {
    case McpServer::Type::Stdio: {
      McpServerStdio s{name, non_empty(r, "command"), {}, {}};
      if (auto args = r.field("args")) {
        if (!args->value().is_array()) args->fail("must be an array of strings");
        s.args = args->as<std::vector<std::string>>();
      }
      s.env = read_name_values(r.field("env"));
      out.value = std::move(s);
      break;
    }
    case McpServer::Type::Http:
    case McpServer::Type::Sse:
      out.value = McpServerHttp{name, r.get<std::string>("url"), read_name_values(r.field("headers"))};
      break;
    case McpServer::Type::Acp:
      out.value = McpServerAcp{name, non_empty(r, "serverId")};
      break;
  }
  out.meta = r.lenient_object("_meta");
}

void tag_invoke(json::value_from_tag, json::value& jv, const McpServer& s) {
  json::object o(jv.storage());
  if (s.type != McpServer::Type::Stdio) o["type"] = kTypeNames[static_cast<int>(s.type)];
  o["name"] = s.name();
  if (const auto* st = std::get_if<McpServerStdio>(&s.value)) {
    o["command"] = st->command;
    o["args"] = json::value_from(st->args, o.storage());
    o["env"] = name_values_json(st->env);
  } else if (const auto* h = std::get_if<McpServerHttp>(&s.value)) {
    o["url"] = h->url;
    o["headers"] = name_values_json(h->headers);
  } else if (const auto* a = std::get_if<McpServerAcp>(&s.value)) {
    o["serverId"] = a->serverId;
  }
  put_meta(o, s.meta);
  jv = std::move(o);
}

McpServer tag_invoke(json::value_to_tag<McpServer>, const json::value& jv) { return Reader(jv).as<McpServer>(); }

}  // namespace acp::schema
