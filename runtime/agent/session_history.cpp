#include "runtime/agent/session_history.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <malloc.h>
#include <variant>
#include <spdlog/spdlog.h>

#include "runtime/agent/agent_error.hpp"
#include "support/run_blocking.hpp"

namespace runtime {

boost::asio::thread_pool& SessionHistory::journal_pool() {
  if (!journal_pool_) journal_pool_ = std::make_unique<boost::asio::thread_pool>(1);
  return *journal_pool_;
}

boost::asio::awaitable<sessions::LoadedSession> SessionHistory::load(const std::string& id, bool summary) {
  auto job = [this, id, summary] { return summary ? store_.load_summary(id) : store_.load(id); };
  auto loaded = co_await support::run_blocking(journal_pool(), std::move(job));
  if (!loaded) throw AgentError(AgentError::Kind::NotFound, "Unknown session: " + id);
  co_return std::move(*loaded);
}

boost::asio::awaitable<void> SessionHistory::load_conversation(Session& s, const sessions::LoadedSession& summary) {
  auto job = [this, &summary] {
    // The replay's buffers are free now, spread over the threads' malloc arenas: give their pages
    // back before the conversation (most of a long session's memory) is built.
    ::malloc_trim(0);
    return store_.load_conversation(summary);
  };
  std::optional<std::vector<Message>> conversation;
  std::string why = "the log could not be opened or read";
  try {
    conversation = co_await support::run_blocking(journal_pool(), std::move(job));
  } catch (const std::exception& e) {  // out of memory: the session stays, without its past
    why = e.what();
  }
  if (!conversation) {
    spdlog::error("session {}: its conversation could not be read back from its journal: {}", s.id, why);
    notify(s, {NoticeSeverity::Error, "The conversation could not be read",
               "Its log could not be read again once the session was opened: the next prompt starts without it.", {}});
    co_return;
  }
  s.conversation.history = std::move(*conversation);
}

boost::asio::awaitable<std::shared_ptr<sessions::SessionWriter>> SessionHistory::open_journal(
    Session& s, const std::optional<sessions::LoadedSession>& loaded) {
  std::shared_ptr<sessions::SessionWriter> journal;
  try {
    if (loaded) {
      // The summary the writer needs, from the load (no second read of the journal); restore() has
      // already taken the conversation, so this copy is small.
      auto job = [this, summary = *loaded] { return std::make_shared<sessions::SessionWriter>(store_.open(summary)); };
      journal = co_await support::run_blocking(journal_pool(), std::move(job));
    } else {
      auto job = [this, header = sessions::Header{s.id, s.settings.cwd.string(), s.settings.agent_name, mode_id(s.settings.mode), {}}] {
        return std::make_shared<sessions::SessionWriter>(store_.create(header));
      };
      journal = co_await support::run_blocking(journal_pool(), std::move(job));
    }
  } catch (const std::exception& e) {
    spdlog::error("session {}: not saved, the session log cannot be written: {}", s.id, e.what());
    s.services.journal_unwritable = e.what();
  }
  co_return journal;
}

std::shared_ptr<sessions::SessionWriter> SessionHistory::create_child_journal(const Session& child, const std::string& parent_id) {
  try {
    const auto& set = child.settings;
    return std::make_shared<sessions::SessionWriter>(
        store_.create(sessions::Header{child.id, set.cwd.string(), set.agent_name, mode_id(set.mode), parent_id}));
  } catch (const std::exception& e) {
    spdlog::error("session {}: not saved, the session log cannot be written: {}", child.id, e.what());
    return nullptr;
  }
}

boost::asio::awaitable<bool> SessionHistory::copy(const std::string& source, sessions::Header header,
                                                  std::optional<std::uint64_t> limit,
                                                  std::vector<sessions::RecordBody> settings) {
  auto job = [this, source, header, limit, settings]() -> std::variant<bool, std::string> {
    try {
      return store_.fork(source, header, limit, settings);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  };
  auto copied = co_await support::run_blocking(*deps_.pool, std::move(job));
  if (auto* err = std::get_if<std::string>(&copied))
    throw AgentError(AgentError::Kind::Internal, "The session could not be forked: " + *err);
  co_return std::get<bool>(copied);
}

boost::asio::awaitable<void> SessionHistory::remove(const std::string& id) {
  auto job = [this, id] { return store_.remove(id); };
  co_await support::run_blocking(*deps_.pool, std::move(job));
}

namespace {
// One batch of a replay being read on the journal thread (the next one is read while this one is sent).
struct ReplayBatch {
  explicit ReplayBatch(boost::asio::any_io_executor ex) : done(std::move(ex)) {}
  support::OneShotEvent done;
  std::vector<SessionEvent> events;
  std::exception_ptr error;
};

std::shared_ptr<ReplayBatch> read_batch(boost::asio::thread_pool& pool, boost::asio::any_io_executor ex,
                                        std::shared_ptr<sessions::Replay> source) {
  auto batch = std::make_shared<ReplayBatch>(std::move(ex));
  boost::asio::post(pool, [batch, source = std::move(source), token = support::BlockingWorkToken()]() mutable {
    try {
      batch->events = source->next();
    } catch (...) {
      batch->error = std::current_exception();
    }
    boost::asio::post(batch->done.executor(), [batch] { batch->done.set(); });
    token.release();
  });
  return batch;
}
}  // namespace

std::shared_ptr<SessionHistory::ReplayRun> SessionHistory::start_replay(const std::string& id) {
  auto source = store_.open_replay(id);
  if (!source) throw AgentError(AgentError::Kind::NotFound, "Unknown session: " + id);
  auto run = std::make_shared<ReplayRun>(deps_.io);
  boost::asio::co_spawn(deps_.io, stream_replay(id, std::move(source), run), boost::asio::detached);
  return run;
}

boost::asio::awaitable<void> SessionHistory::stream_replay(std::string id, std::shared_ptr<sessions::Replay> source,
                                                           std::shared_ptr<ReplayRun> run) {
  try {
    const bool subagents = deps_.editor->shows_subagents();
    // One read at a time (Replay is not thread-safe): the next starts once this one is done.
    auto reading = read_batch(*deps_.pool, deps_.io, source);
    for (;;) {
      co_await reading->done.wait();
      if (reading->error) std::rethrow_exception(reading->error);
      auto batch = std::move(reading->events);
      if (batch.empty() || run->stop) break;
      reading = read_batch(*deps_.pool, deps_.io, source);
      // An editor that does not show sub-agent sessions must not be told about them.
      if (!subagents) std::erase_if(batch, [](const SessionEvent& e) { return std::holds_alternative<SubagentChanged>(e); });
      deps_.editor->emit_all(id, std::move(batch));
      // Once the editor has read most of what is queued (the transport's bound), the next batch.
      co_await deps_.editor->wait_for_editor(nullptr);
    }
  } catch (...) {
    run->error = std::current_exception();
  }
  run->done.set();
}

boost::asio::awaitable<void> SessionHistory::finish_replay(const Session& s, ReplayRun& run,
                                                           const sessions::LoadedSession& loaded) {
  co_await run.done.wait();
  if (run.error) std::rethrow_exception(run.error);
  if (!loaded.title.empty()) deps_.editor->emit(s.id, TitleChanged{loaded.title, {}});
}

}  // namespace runtime
