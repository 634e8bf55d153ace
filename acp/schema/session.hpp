#pragma once
// The session lifecycle and the session list: session/new, load, resume, fork (they share
// SessionSetup: cwd, additionalDirectories, mcpServers, systemPrompt, _meta), close, delete,
// list, and the unstable set_title, archive, unarchive, status; session/cancel.
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "acp/schema/config.hpp"
#include "acp/schema/content.hpp"
#include "acp/schema/mcp_server.hpp"
#include "acp/schema/reader.hpp"

namespace acp::schema {

// `systemPrompt` (unstable): the client's instructions, text blocks only, appended to the
// agent's or overriding them.
struct SystemPrompt {
  std::string mode;  // "append" | "override"
  std::vector<ContentBlock> content;
};

// What session/new, load, resume and fork share.
struct SessionSetup {
  std::string cwd;                                 // absolute
  std::vector<std::string> additionalDirectories;  // absolute
  std::vector<McpServer> mcpServers;
  std::optional<SystemPrompt> systemPrompt;
  std::optional<boost::json::object> meta;
  // `_meta.openvaala.executor`: the session's default executor ("" = the configured one).
  std::string executor() const;
};

struct NewSessionRequest : SessionSetup {};
struct LoadSessionRequest : SessionSetup {
  std::string sessionId;
};
struct ResumeSessionRequest : LoadSessionRequest {};
struct ForkSessionRequest : LoadSessionRequest {};  // unstable

// The answer of all four (sessionId: new and fork only).
struct NewSessionResponse {
  std::optional<std::string> sessionId;
  SessionModeState modes;
  std::vector<SessionConfigOption> configOptions;
};
using LoadSessionResponse = NewSessionResponse;

// A request that names a session and nothing else: close, delete, archive, unarchive, status.
struct SessionRef {
  std::string sessionId;
};
struct CancelNotification : SessionRef {};

struct SetSessionTitleRequest {
  std::string sessionId;
  std::string title;
};
struct SetSessionTitleResponse {
  std::string title;
};

struct ListSessionsRequest {
  std::optional<std::string> cwd;  // absolute
  std::optional<std::string> cursor;
  std::string archived = "exclude";  // unstable: "exclude" | "include" | "only"
};

struct SessionInfo {
  std::string sessionId;
  std::string cwd;
  std::optional<std::string> title;
  std::optional<std::string> updatedAt;
  bool archived = false;
};

struct ListSessionsResponse {
  std::vector<SessionInfo> sessions;
  std::optional<std::string> nextCursor;
};

struct SessionStatusResponse {
  std::string status;
};

// Throws -32602 naming the entry when the cwd or an additional directory is not a directory
// on this machine (decoding checks only that they are absolute).
void require_directories(const SessionSetup& s);

void read(const Reader& r, SystemPrompt& out);
void read(const Reader& r, NewSessionRequest& out);
void read(const Reader& r, LoadSessionRequest& out);
void read(const Reader& r, SessionRef& out);
void read(const Reader& r, SetSessionTitleRequest& out);
void read(const Reader& r, ListSessionsRequest& out);
void read(const Reader& r, SessionInfo& out);
void read(const Reader& r, ListSessionsResponse& out);

void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const SessionSetup& s);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const LoadSessionRequest& s);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const NewSessionResponse& r);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const SetSessionTitleResponse& r);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const SessionInfo& s);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const ListSessionsResponse& r);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const SessionStatusResponse& r);

}  // namespace acp::schema
