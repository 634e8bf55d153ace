#pragma once
// Saved sessions as the editor's session list sees them: the list, titles set by the user, the
// archive, and whether a session is open. These work on sessions that are not open too, through
// the store (on the worker pool); an open session's own writer is used when there is one, so its
// sidecar stays right.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "runtime/agent/session.hpp"
#include "runtime/protocol/editor_host.hpp"
#include "runtime/sessions/session_store.hpp"

namespace runtime {

class SessionCatalog {
 public:
  // What the catalog needs of the open sessions (SessionManager).
  struct OpenSessions {
    std::function<std::shared_ptr<Session>(const std::string& id)> find;  // null: not open
    std::function<boost::asio::awaitable<void>(const std::string& id)> close;
  };
  SessionCatalog(sessions::SessionStore& store, boost::asio::thread_pool& pool, EditorHost& editor, OpenSessions open)
      : store_(store), pool_(pool), editor_(editor), open_(std::move(open)) {}

  // Throws AgentError(InvalidParams) for a bad cursor.
  boost::asio::awaitable<sessions::ListPage> list(std::optional<std::string> cwd, std::optional<std::string> cursor,
                                                  sessions::ArchiveFilter archived = sessions::ArchiveFilter::Exclude);
  // Each of these throws AgentError(NotFound) for a session that is neither open nor saved.
  // session/set_title: stores the title (normalised: one line, at most 200 characters; returned)
  // and shows it in an open session; an automatic title never replaces it.
  boost::asio::awaitable<std::string> set_title(const std::string& id, std::string title);
  // session/archive (closing the session first when it is open) and session/unarchive.
  boost::asio::awaitable<void> set_archived(const std::string& id, bool archived);
  // session/status: "open" (in memory) or "saved". No side effects.
  boost::asio::awaitable<const char*> status(const std::string& id);

 private:
  sessions::SessionStore& store_;
  boost::asio::thread_pool& pool_;
  EditorHost& editor_;
  OpenSessions open_;
};

}  // namespace runtime
