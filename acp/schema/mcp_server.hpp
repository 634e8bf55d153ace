#pragma once
// ACP McpServer: the MCP servers an editor gives session/new, load, resume and fork.
//   stdio: {name, command, args, env: [{name, value}]} with no "type" or "type": "stdio"
//   http / sse: {type, name, url, headers: [{name, value}]}
//   acp (MCP over ACP, unstable): {type: "acp", name, serverId}
// `env` and `headers` also accept a plain object {NAME: value} (older clients).
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "acp/schema/reader.hpp"

namespace acp::schema {

using NameValues = std::vector<std::pair<std::string, std::string>>;  // EnvVariable[] / HttpHeader[]

struct McpServerStdio {
  std::string name;
  std::string command;
  std::vector<std::string> args;
  NameValues env;
};

struct McpServerHttp {  // also sse
  std::string name;
  std::string url;
  NameValues headers;
};

struct McpServerAcp {
  std::string name;
  std::string serverId;
};

struct McpServer {
  enum class Type { Stdio, Http, Sse, Acp };
  Type type = Type::Stdio;
  std::variant<McpServerStdio, McpServerHttp, McpServerAcp> value;
  std::optional<boost::json::object> meta;
  const std::string& name() const;
};

void read(const Reader& r, McpServer& out);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const McpServer& s);
McpServer tag_invoke(boost::json::value_to_tag<McpServer>, const boost::json::value& jv);

}  // namespace acp::schema
