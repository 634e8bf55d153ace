#pragma once
// The editor's side of taking back a message (issue 36, docs/editors.md):
//   _session/rewind {sessionId, messageId}            -> {rewound: true, sessionId}
//   _session/rewind_files {sessionId, messageId, dryRun?, force?} -> {files: [{path, action}], dryRun, ...}
// (claude-agent-acp's {beforeMessage: {messageId}} is read too), and the user message ids of
// session/prompt: a client's own `messageId`, else a fresh one, answered as `userMessageId`.
#include <string>

#include "acp/connection.hpp"
#include "acp/params.hpp"
#include "acp/rpc_error.hpp"
#include "runtime/agent/session_manager.hpp"

namespace runtime::server {

void bind_rewind_methods(acp::Connection& conn, SessionManager& sessions);

// The id of the user message session/prompt `p` sends to `session`: the client's `messageId`
// (-32602 when it is not usable: rewind.hpp's check_new_message_id), else a fresh one.
std::string prompt_message_id(const acp::Params& p, const Session& session);

}  // namespace runtime::server
