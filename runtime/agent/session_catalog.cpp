#include "runtime/agent/session_catalog.hpp"

#include <spdlog/spdlog.h>

#include <variant>

#include "runtime/agent/agent_error.hpp"
#include "runtime/agent/journal.hpp"
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

boost::asio::awaitable<sessions::ListPage> SessionCatalog::list(std::optional<std::string> cwd,
                                                                std::optional<std::string> cursor,
                                                                sessions::ArchiveFilter archived) {
  auto job = [this, cwd, cursor, archived]() -> std::variant<sessions::ListPage, std::string> {
    try {
      return store_.list(cwd, cursor, 50, archived);
    } catch (const sessions::InvalidCursor& e) {
      return std::string(e.what());
    }
  };
  auto page = co_await support::run_blocking(pool_, std::move(job));
  if (auto* err = std::get_if<std::string>(&page)) throw AgentError(AgentError::Kind::InvalidParams, "'cursor': " + *err);
  co_return std::move(std::get<sessions::ListPage>(page));
}

boost::asio::awaitable<std::string> SessionCatalog::set_title(const std::string& id, std::string title) {
  std::string stored = normalise_title(title);
  if (stored.empty()) throw AgentError(AgentError::Kind::InvalidParams, "'title' must not be empty");
  if (auto open = open_.find(id)) {
    Session& s = *open;
    record(s, sessions::TitleChange{stored});
    if (s.services.journal) s.services.journal->turn_boundary();  // answered only once it is stored (ACP)
    editor_.emit(s.id, TitleChanged{stored, s.services.journal ? s.services.journal->updated_at() : std::string{}});
    co_return stored;
  }
  // Separate statements: GCC 12 mishandles co_await inside || (see AcpAgent::end_session).
  bool saved = sessions::valid_session_id(id);
  const sessions::RecordBody change = sessions::TitleChange{stored};
  if (saved) saved = co_await append_to_saved(pool_, store_, id, change);
  if (!saved) throw AgentError(AgentError::Kind::NotFound, "Unknown session: " + id);
  co_return stored;
}

boost::asio::awaitable<void> SessionCatalog::set_archived(const std::string& id, bool archived) {
  if (auto session = open_.find(id)) {
    // Through the session's own writer, which a turn still ending may use after us: its sidecar
    // then keeps the archive state. An archived session is not worked on: a turn in flight is
    // cancelled and its servers stop, as session/close does.
    if (archived) co_await open_.close(id);
    record(*session, sessions::ArchiveChange{archived});
    if (session->services.journal) session->services.journal->turn_boundary();
    co_return;
  }
  bool saved = sessions::valid_session_id(id);
  const sessions::RecordBody change = sessions::ArchiveChange{archived};
  if (saved) saved = co_await append_to_saved(pool_, store_, id, change);
  if (!saved) throw AgentError(AgentError::Kind::NotFound, "Unknown session: " + id);
  spdlog::info("session {} {}", id, archived ? "archived" : "unarchived");
}

boost::asio::awaitable<const char*> SessionCatalog::status(const std::string& id) {
  if (open_.find(id)) co_return "open";
  auto job = [this, id] { return sessions::valid_session_id(id) && store_.exists(id); };
  const bool saved = co_await support::run_blocking(pool_, std::move(job));
  if (saved) co_return "saved";
  throw AgentError(AgentError::Kind::NotFound, "Unknown session: " + id);
}

}  // namespace runtime
