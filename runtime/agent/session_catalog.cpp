// Saved sessions as the editor's session list sees them: titles set by the user, the archive,
// and whether a session is open. These work on sessions that are not open too, through the
// store (on the worker pool); an open session's own writer is used when there is one, so its
// sidecar stays right.
#include <spdlog/spdlog.h>

#include "runtime/agent/journal.hpp"
#include "runtime/agent/session_manager.hpp"
#include "support/run_blocking.hpp"

namespace runtime {

namespace {
constexpr std::size_t kMaxTitleChars = 200;

// One line: runs of blanks and line breaks become one space; trimmed; cut like an automatic title.
std::string normalise_title(std::string_view title) {
  std::string one_line;
  bool blank = false;
  for (char c : title) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      blank = true;
      continue;
    }
    if (blank && !one_line.empty()) one_line.push_back(' ');
    blank = false;
    one_line.push_back(c);
  }
  return sessions::title_from_text(one_line, kMaxTitleChars);
}

// Appends `body` to the saved session `id` that is not open; false: there is no such session.
// `body` is a named object of the caller's: GCC 12 corrupts a variant converted into a coroutine's
// by-value parameter.
boost::asio::awaitable<bool> append_to_saved(boost::asio::thread_pool& pool, sessions::SessionStore& store,
                                             const std::string& id, const sessions::RecordBody& body) {
  auto job = [&store, id, body]() -> std::variant<bool, std::string> {
    try {
      if (!store.exists(id)) return false;
      auto writer = store.open(id);
      writer.append(body);
      writer.turn_boundary();
      return true;
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  };
  auto done = co_await support::run_blocking(pool, std::move(job));
  if (auto* err = std::get_if<std::string>(&done))
    throw AgentError(AgentError::Kind::Internal, "The session could not be changed: " + *err);
  co_return std::get<bool>(done);
}
}  // namespace

boost::asio::awaitable<std::string> SessionManager::set_title(const std::string& id, std::string title) {
  std::string stored = normalise_title(title);
  if (stored.empty()) throw AgentError(AgentError::Kind::InvalidParams, "'title' must not be empty");
  if (auto it = sessions_.find(id); it != sessions_.end()) {
    Session& s = *it->second;
    record(s, sessions::TitleChange{stored});
    if (s.log) s.log->turn_boundary();  // answered only once it is stored (ACP)
    s.title_sent = stored;
    deps_.host->emit(s.id, TitleChanged{stored, s.log ? s.log->updated_at() : std::string{}});
    co_return stored;
  }
  // Separate statements: GCC 12 mishandles co_await inside || (see AcpAgent::end_session).
  bool saved = sessions::valid_session_id(id);
  const sessions::RecordBody change = sessions::TitleChange{stored};
  if (saved) saved = co_await append_to_saved(*deps_.pool, store_, id, change);
  if (!saved) throw AgentError(AgentError::Kind::NotFound, "Unknown session: " + id);
  co_return stored;
}

boost::asio::awaitable<void> SessionManager::set_archived(const std::string& id, bool archived) {
  if (auto it = sessions_.find(id); it != sessions_.end()) {
    // Through the session's own writer, which a turn still ending may use after us: its sidecar
    // then keeps the archive state. An archived session is not worked on: a turn in flight is
    // cancelled and its servers stop, as session/close does.
    auto session = it->second;
    if (archived) co_await close(id);
    record(*session, sessions::ArchiveChange{archived});
    if (session->log) session->log->turn_boundary();
    co_return;
  }
  bool saved = sessions::valid_session_id(id);
  const sessions::RecordBody change = sessions::ArchiveChange{archived};
  if (saved) saved = co_await append_to_saved(*deps_.pool, store_, id, change);
  if (!saved) throw AgentError(AgentError::Kind::NotFound, "Unknown session: " + id);
  spdlog::info("session {} {}", id, archived ? "archived" : "unarchived");
}

boost::asio::awaitable<const char*> SessionManager::status(const std::string& id) {
  if (sessions_.count(id)) co_return "open";
  auto job = [this, id] { return sessions::valid_session_id(id) && store_.exists(id); };
  const bool saved = co_await support::run_blocking(*deps_.pool, std::move(job));
  if (saved) co_return "saved";
  throw AgentError(AgentError::Kind::NotFound, "Unknown session: " + id);
}

}  // namespace runtime
