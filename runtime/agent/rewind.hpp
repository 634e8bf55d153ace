#pragma once
// Taking back what was said (issue 36): _session/rewind drops a user message and everything after
// it from what the model sees next and from what session/load replays. The journal keeps a
// `rewind` record (runtime/sessions/rewinds.hpp); nothing is deleted from disk.
#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>

#include "runtime/agent/session.hpp"
#include "runtime/agent/session_history.hpp"

namespace runtime {

// The user message `message_id` of `session` and everything after it are gone from its
// conversation (journaled, then the conversation is read back from the journal so that the session
// holds what a load would give it). Throws AgentError: InvalidRequest while a turn runs (nothing
// changes), InvalidParams when no user message of the conversation has that id.
boost::asio::awaitable<void> rewind_conversation(SessionHistory& history, std::shared_ptr<Session> session,
                                                 std::string message_id);

// A user message id the editor gave (session/prompt's `messageId`) is usable: a non-empty string
// of at most 128 characters that no user message of the conversation has. Throws
// AgentError(InvalidParams) naming the problem.
void check_new_message_id(const Session& session, const std::string& message_id);

// Holds a session as a running turn does while something changes its conversation: a prompt (or
// another rewind) that comes meanwhile is refused as "already running". Throws
// AgentError(InvalidRequest) when a turn runs already.
class ConversationHold {
 public:
  ConversationHold(Session& session, const char* what);
  ~ConversationHold();
  ConversationHold(const ConversationHold&) = delete;
  ConversationHold& operator=(const ConversationHold&) = delete;

 private:
  Session& session_;
  support::CancelSourcePtr mine_;
};

}  // namespace runtime
