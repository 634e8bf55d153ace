#pragma once
// initialize, authenticate, logout and the unstable auth/status (+ auth/status_update).
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "acp/schema/reader.hpp"

namespace acp::schema {

// What the client can do, reduced to the flags this agent uses (as clangd's ClientCapabilities
// "doesn't mirror LSP"). Read leniently (the schema's default-on-error): a malformed part reads
// as not advertised.
struct ClientCapabilities {
  bool fs_read = false;
  bool fs_write = false;
  bool terminal = false;
  bool auth_terminal = false;  // auth.terminal: the client can run `type: "terminal"` auth methods
  bool subagents = false;      // subagents (unstable): sub-agents as sessions of their own
  bool notices = false;        // session.notices: `notice` session updates
  bool compaction = false;     // session.compaction: `compaction_update` / `compaction_summary_chunk`
  bool elicitation_form = false;  // elicitation.form: `elicitation/create` with mode "form"
  bool elicitation_url = false;   // elicitation.url: `elicitation/create` with mode "url"

  static ClientCapabilities from_json(const boost::json::value& caps);
};

struct Implementation {
  std::string name;
  std::optional<std::string> title;
  std::optional<std::string> version;
};

struct InitializeRequest {
  std::int64_t protocolVersion = 0;
  ClientCapabilities clientCapabilities;
  std::optional<Implementation> clientInfo;
};

struct PromptCapabilities {
  bool image = false;
  bool audio = false;
  bool embeddedContext = false;
};

struct McpCapabilities {
  bool http = false;
  bool sse = false;
  bool acp = false;  // unstable: MCP over ACP
};

struct AgentCapabilities {
  bool loadSession = false;
  PromptCapabilities promptCapabilities;
  McpCapabilities mcpCapabilities;
  std::vector<std::string> sessionCapabilities;  // each advertised as `name: {}`
  std::vector<std::string> systemPromptModes;    // sessionCapabilities.systemPrompt.mode.<m>: {}
  std::vector<std::string> auth;                 // auth.<name>: {} (logout, status)
};

struct AuthMethod {
  std::string id;
  std::string name;
  std::optional<std::string> description;
  std::optional<std::string> type;       // "terminal"; absent: the agent's own method
  std::vector<std::string> args;         // terminal: how to run this binary for it
};

struct InitializeResponse {
  std::int64_t protocolVersion = 1;
  AgentCapabilities agentCapabilities;
  std::vector<AuthMethod> authMethods;
  Implementation agentInfo;
  std::optional<boost::json::object> meta;  // `_meta`: what extensions the agent ships (steering)
};

struct AuthenticateRequest {
  std::string methodId;
};

struct AuthAccount {
  std::string label;
  bool active = false;
};

// auth/status's answer and auth/status_update's params.
struct AuthStatus {
  std::string state;  // "not_required" | "authenticated" | "unauthenticated"
  std::vector<AuthAccount> accounts;
};

void read(const Reader& r, Implementation& out);
void read(const Reader& r, InitializeRequest& out);
void read(const Reader& r, AuthenticateRequest& out);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const Implementation& i);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const AgentCapabilities& c);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const AuthMethod& m);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const InitializeResponse& r);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const AuthStatus& s);

}  // namespace acp::schema
