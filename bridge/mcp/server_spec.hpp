#pragma once
// What the MCP client needs to reach one server: the transport-level description the runtime
// builds from `mcp_servers/<id>.yaml`, plugin servers and the editor's `session/new`
// `mcpServers`. No validation of config files here; only what a transport needs.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace bridge::mcp {

namespace oauth {
class Authorizer;
}

struct StdioSpec {
  std::string command;  // looked up on PATH (the overlay's PATH if it sets one) when it has no '/'
  std::vector<std::string> args;
  // Added to (or replacing entries of) the inherited environment.
  std::vector<std::pair<std::string, std::string>> env;
  std::string cwd;  // empty = inherit
};

struct HttpSpec {  // Streamable HTTP (MCP 2025-03-26 and later)
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  // OAuth (bridge/mcp/oauth_flow.hpp): sends its bearer token and asks it after a 401; null: none.
  std::shared_ptr<oauth::Authorizer> auth;
  std::string connect_to;  // "host:port" dialled instead of the URL's (HttpRequest::connect_to)
};

struct SseSpec {  // the older HTTP+SSE transport (MCP 2024-11-05): GET /sse, POST to the endpoint
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<oauth::Authorizer> auth;  // as in HttpSpec
  std::string connect_to;                   // as in HttpSpec
};

struct AcpSpec {  // MCP-over-ACP: the server lives in the editor
  std::string server_id;
};

using TransportSpec = std::variant<StdioSpec, HttpSpec, SseSpec, AcpSpec>;

struct ServerSpec {
  std::string id;  // as the model sees it in mcp__<id>__<tool>; [A-Za-z0-9_-]
  TransportSpec transport;
  std::chrono::milliseconds startup_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds tool_timeout{std::chrono::seconds(300)};
  // Tool names (the server's own) offered to the model; nullopt = all.
  std::optional<std::vector<std::string>> tools;
  bool required = false;  // the turn fails when it cannot be reached
  std::string origin;     // for messages: "mcp_servers/x.yaml", "session/new", "plugin foo"
  std::string executor = "local";  // where a configured server runs (DESIGN §10); part of its sharing key
};

const char* transport_name(const TransportSpec& t);

}  // namespace bridge::mcp
