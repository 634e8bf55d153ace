#pragma once
// The sessions' journals (runtime/sessions/SessionStore) as the sessions use them: loading a saved
// one (its summary, then its conversation), creating or opening its writer, replaying it to the
// editor for session/load, copying it for session/fork and deleting it. All the file work runs on
// the journals' own thread, so it never queues behind the shared pool's work.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/agent/session.hpp"
#include "runtime/protocol/editor_host.hpp"
#include "runtime/sessions/session_store.hpp"
#include "support/one_shot_event.hpp"
#include "support/run_blocking.hpp"

namespace runtime {

class SessionHistory {
 public:
  struct Deps {
    boost::asio::any_io_executor io;
    boost::asio::thread_pool* pool = nullptr;  // the shared pool: a replay's batches are read there
    EditorHost* editor = nullptr;
    std::filesystem::path sessions_dir;
  };
  explicit SessionHistory(Deps deps) : deps_(std::move(deps)), store_(deps_.sessions_dir) {}

  sessions::SessionStore& store() { return store_; }

  // The saved session `id` (AgentError(NotFound) when there is none): for session/load and
  // session/resume its summary (the conversation is read after the answer: load_conversation),
  // else whole.
  boost::asio::awaitable<sessions::LoadedSession> load(const std::string& id, bool summary);
  // The conversation of a session opened from its summary, before its first turn. When it cannot
  // be read the session goes on without its past, and a notice says so.
  boost::asio::awaitable<void> load_conversation(Session& s, const sessions::LoadedSession& summary);
  // The session's journal, created (new) or opened for appending (load, resume, fork): creating
  // fsyncs the journal, its sidecar and the folder, which must not stall the io thread that serves
  // every session. Null (logged, and why in s.services.journal_unwritable) when it cannot be written.
  boost::asio::awaitable<std::shared_ptr<sessions::SessionWriter>> open_journal(
      Session& s, const std::optional<sessions::LoadedSession>& loaded);
  // A sub-agent's own journal, naming its parent (null, logged, when it cannot be written).
  std::shared_ptr<sessions::SessionWriter> create_child_journal(const Session& child, const std::string& parent_id);
  // session/fork's copy: `header` names the new session; `limit` (a turn in flight at the source)
  // cuts the copy there; `settings` follow. False: no session `source`; throws AgentError(Internal).
  boost::asio::awaitable<bool> copy(const std::string& source, sessions::Header header, std::optional<std::uint64_t> limit,
                                    std::vector<sessions::RecordBody> settings);
  boost::asio::awaitable<void> remove(const std::string& id);

  // session/load's history, sent while the session loads: read from its journal a batch at a
  // time on the pool (the load runs on the journals' thread beside it), each batch once the editor
  // has read most of the previous one, so memory stays bounded however long the session. A run
  // that is dropped before it ends (the load failed) stops at its next batch.
  struct ReplayRun {
    explicit ReplayRun(boost::asio::any_io_executor ex) : done(std::move(ex)) {}
    support::OneShotEvent done;
    std::exception_ptr error;
    bool stop = false;  // set when the session/load it belongs to ends (failed, or answered)
  };
  // AgentError(NotFound) when there is no session `id`.
  std::shared_ptr<ReplayRun> start_replay(const std::string& id);
  // Waits for the history to be sent, then sends the title: what session/load sends before its answer.
  boost::asio::awaitable<void> finish_replay(const Session& s, ReplayRun& run, const sessions::LoadedSession& loaded);

  // Other blocking work on a session's journal (a rewind, rewind.hpp), on the journals' thread.
  template <class F>
  auto on_journal_thread(F job) -> boost::asio::awaitable<std::invoke_result_t<F>> {
    co_return co_await support::run_blocking(journal_pool(), std::move(job));
  }

 private:
  boost::asio::awaitable<void> stream_replay(std::string id, std::shared_ptr<sessions::Replay> source,
                                             std::shared_ptr<ReplayRun> run);
  boost::asio::thread_pool& journal_pool();

  Deps deps_;
  sessions::SessionStore store_;
  // The journals' own thread (made at first use): creating, opening and loading a journal must not
  // queue behind the shared pool's work, e.g. 100 MCP server spawns of the session before. Last,
  // so it is joined before the store goes.
  std::unique_ptr<boost::asio::thread_pool> journal_pool_;
};

}  // namespace runtime
