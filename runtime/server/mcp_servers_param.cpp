#include "runtime/server/mcp_servers_param.hpp"

#include <boost/url/parse.hpp>

#include <set>

#include "acp/rpc_error.hpp"
#include "bridge/mcp/naming.hpp"

namespace runtime::server {

using namespace bridge::mcp;
using acp::schema::McpServer;

namespace json = boost::json;

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw acp::invalid_params(path + " " + what);
}

std::string http_url(const std::string& url, const std::string& path) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed || (parsed->scheme() != "http" && parsed->scheme() != "https") || parsed->host().empty())
    fail(path + ".url", "must be an http(s) URL, got '" + url + "'");
  return url;
}

TransportSpec transport_of(const McpServer& server, const std::string& path, const AcpServerOptions& options) {
  using Type = McpServer::Type;
  switch (server.type) {
    case Type::Stdio: {
      const auto& s = std::get<acp::schema::McpServerStdio>(server.value);
      return StdioSpec{s.command, s.args, s.env, options.cwd};
    }
    case Type::Http:
    case Type::Sse: {
      const bool sse = server.type == Type::Sse;
      if (!(sse ? options.allow_sse : options.allow_http))
        fail(path + ".type", std::string("'") + (sse ? "sse" : "http") + "' is not supported by this agent");
      const auto& h = std::get<acp::schema::McpServerHttp>(server.value);
      auto url = http_url(h.url, path);
      if (sse) return SseSpec{std::move(url), h.headers, nullptr};
      return HttpSpec{std::move(url), h.headers, nullptr};
    }
    case Type::Acp:
      if (!options.allow_acp) fail(path + ".type", "'acp' is not supported by this agent");
      return AcpSpec{std::get<acp::schema::McpServerAcp>(server.value).serverId};
  }
  fail(path + ".type", "is not supported by this agent");
}

}  // namespace

std::vector<ServerSpec> mcp_server_specs(const std::vector<McpServer>& servers, const AcpServerOptions& options) {
  std::vector<ServerSpec> out;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const std::string path = "mcpServers[" + std::to_string(i) + "]";
    const auto& server = servers[i];
    ServerSpec spec;
    spec.id = sanitize_name(server.name());
    if (!ids.insert(spec.id).second) fail(path + ".name", "'" + server.name() + "' is used by another MCP server of this session");
    spec.startup_timeout = options.startup_timeout;
    spec.tool_timeout = options.tool_timeout;
    spec.origin = "session/new " + path;
    spec.transport = transport_of(server, path, options);
    out.push_back(std::move(spec));
  }
  return out;
}

std::vector<ServerSpec> parse_acp_mcp_servers(const json::value& value, const AcpServerOptions& options) {
  if (value.is_null()) return {};
  auto servers = acp::schema::Reader(value, "mcpServers").as<std::vector<McpServer>>();
  return mcp_server_specs(servers, options);
}

}  // namespace runtime::server
