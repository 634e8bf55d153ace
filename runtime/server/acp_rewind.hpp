#pragma once
// Taking back a message over ACP (issue 36, docs/editors.md): _session/rewind (the conversation)
// and _session/rewind_files (the files, from their checkpoints), and the user message ids of
// session/prompt they name: a client's own `messageId`, else a fresh one, answered as
// `userMessageId`.
#include <optional>
#include <string>

#include "acp/binder.hpp"
#include "acp/schema/rewind.hpp"
#include "runtime/agent/session_manager.hpp"

namespace runtime::server {

class AcpRewind {
 public:
  explicit AcpRewind(SessionManager& sessions) : sessions_(sessions) {}
  void bind(acp::Binder& binder);
  // `_meta.rewind` of initialize: {supported: true, files: true}.
  static boost::json::object initialize_meta();

 private:
  acp::awaitable<acp::schema::RewindResponse> rewind(acp::schema::RewindRequest req);
  acp::awaitable<acp::schema::RewindFilesResponse> rewind_files(acp::schema::RewindRequest req);

  SessionManager& sessions_;
};

// The id of the user message session/prompt sends to `session`: the client's `messageId` (-32602
// when it is not usable: rewind.hpp's check_new_message_id), else a fresh one.
std::string prompt_message_id(const std::optional<std::string>& client_id, const Session& session);

}  // namespace runtime::server
