// _session/rewind: the journal records the rewind, then the session's conversation is what a load
// of the journal gives (rewind.hpp).
#include "runtime/agent/rewind.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <spdlog/spdlog.h>

#include "runtime/agent/agent_error.hpp"
#include "runtime/sessions/rewinds.hpp"

namespace runtime {

namespace {

constexpr std::size_t kMaxMessageIdChars = 128;

// What the journal thread did with a rewind.
struct JournalRewind {
  bool found = false;  // the log holds that user message, not rewound already
  bool journaled = false;
  std::optional<std::vector<Message>> conversation;  // read back with the rewind applied
  std::string error;   // the log could not be read or written
};

// On the journals' thread: the message is looked up in the log, the rewind journaled (fsync'ed:
// a rewind the user was told about survives a crash) and the conversation read back.
JournalRewind rewind_journal(sessions::SessionStore& store, sessions::SessionWriter& journal, const std::string& id,
                             const std::string& message_id) {
  JournalRewind out;
  try {
    const int fd = ::open(store.file_of(id).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("the session log cannot be opened");
    out.found = sessions::has_live_user_message(fd, message_id);
    ::close(fd);
    if (!out.found) return out;
    journal.append(sessions::Rewind{message_id});
    journal.turn_boundary();
    out.journaled = true;
    if (auto loaded = store.load(id)) out.conversation = std::move(loaded->conversation);
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

// The last user message `message_id` of the history; npos: none.
std::size_t user_message_at(const std::vector<Message>& history, const std::string& message_id) {
  for (std::size_t i = history.size(); i-- > 0;)
    if (history[i].role == Message::Role::User && history[i].id == message_id) return i;
  return std::string::npos;
}

[[noreturn]] void unknown_message(const std::string& message_id) {
  throw AgentError(AgentError::Kind::InvalidParams,
                   "Unknown messageId '" + message_id + "': no user message of this session's conversation has it "
                   "(it may have been rewound already)");
}

}  // namespace

ConversationHold::ConversationHold(Session& session, const char* what) : session_(session) {
  if (session.turn.cancel)
    throw AgentError(AgentError::Kind::InvalidRequest,
                     std::string("A prompt is running in this session: cancel it or wait for its end before ") + what);
  mine_ = std::make_shared<support::CancelSource>();
  session.turn.cancel = mine_;
  // A fork meanwhile copies the journal as it was before.
  if (session.services.journal) session.turn.journal_before = session.services.journal->size();
}

ConversationHold::~ConversationHold() {
  if (session_.turn.cancel == mine_) session_.turn.cancel.reset();
}

boost::asio::awaitable<void> rewind_conversation(SessionHistory& history, std::shared_ptr<Session> session,
                                                 std::string message_id) {
  Session& s = *session;
  if (message_id.empty()) throw AgentError(AgentError::Kind::InvalidParams, "'messageId' must not be empty");
  // A loaded session's conversation is read after the session/load answer: the rewind comes after.
  if (s.started) co_await s.started->wait();
  ConversationHold hold(s, "rewinding");
  if (!s.services.journal) {  // nothing saved: the conversation in memory is all there is
    const std::size_t at = user_message_at(s.conversation.history, message_id);
    if (at == std::string::npos) unknown_message(message_id);
    s.conversation.history.resize(at);
    co_return;
  }
  auto job = [&store = history.store(), journal = s.services.journal, id = s.id, message_id] {
    return rewind_journal(store, *journal, id, message_id);
  };
  JournalRewind done = co_await history.on_journal_thread(std::move(job));
  if (!done.journaled && !done.error.empty())  // nothing changed
    throw AgentError(AgentError::Kind::Internal, "The rewind could not be journaled: " + done.error);
  if (!done.found) unknown_message(message_id);
  if (done.conversation) {
    s.conversation.history = std::move(*done.conversation);
  } else {  // journaled, but not read back: the same cut in memory (a compacted message stays compacted)
    spdlog::error("session {}: the conversation could not be read back after a rewind: {}", s.id, done.error);
    const std::size_t at = user_message_at(s.conversation.history, message_id);
    if (at != std::string::npos) s.conversation.history.resize(at);
  }
  // Measured again at the next answer: the shorter conversation must not trigger a compaction.
  s.conversation.context_tokens = 0;
  // As after a load: AGENTS.md files the dropped messages carried are given again when read again.
  s.conversation.agents_md_included.clear();
  spdlog::info("session {}: rewound to before message {}", s.id, message_id);
}

void check_new_message_id(const Session& session, const std::string& message_id) {
  if (message_id.empty() || message_id.size() > kMaxMessageIdChars)
    throw AgentError(AgentError::Kind::InvalidParams, "'messageId' must be a non-empty string of at most 128 characters");
  if (user_message_at(session.conversation.history, message_id) != std::string::npos)
    throw AgentError(AgentError::Kind::InvalidParams,
                     "'messageId' " + message_id + " is taken by an earlier user message of this session");
}

}  // namespace runtime
