// Putting files back from their checkpoints (rewind_files.hpp).
#include "runtime/agent/rewind_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "runtime/agent/agent_error.hpp"
#include "runtime/agent/checkpointing.hpp"
#include "runtime/agent/rewind.hpp"
#include "runtime/sessions/checkpoints.hpp"
#include "runtime/sessions/rewinds.hpp"
#include "support/file_io.hpp"

namespace runtime {

namespace fs = std::filesystem;

namespace {

using FileBefore = sessions::CheckpointStore::FileBefore;

// What is to be done with one file.
FileRewound action_for(const FileBefore& f, bool force) {
  FileRewound out{f.path.string(), f.content ? "restore" : "delete", {}};
  if (!f.available) out.action = "unavailable";
  else if (f.changed_by_hand && !force) out.action = "conflict";
  return out;
}
bool acts(const FileRewound& r) { return r.action == "restore" || r.action == "delete"; }

// What is done with one local file (`dry_run`: what would be).
FileRewound restore_one(sessions::CheckpointStore& store, const FileBefore& f, bool dry_run, bool force) {
  FileRewound out = action_for(f, force);
  if (dry_run || !acts(out)) return out;
  try {
    if (f.content) {
      struct stat st{};
      const mode_t mode = ::stat(f.path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
      fs::create_directories(f.path.parent_path());
      support::write_file_atomically(f.path, *f.content, mode);
    } else {
      fs::remove(f.path);
    }
    store.after_change(f.path, f.content);  // what is there now is the agent's: a later rewind sees no conflict
  } catch (const std::exception& e) {
    out.action = "failed";
    out.error = e.what();
  }
  return out;
}

// Whether the journal has this user message (one that changed no file has no checkpoint).
bool journal_has(sessions::SessionStore& store, const std::string& id, const std::string& message_id) {
  const int fd = ::open(store.file_of(id).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool found = sessions::has_live_user_message(fd, message_id);
  ::close(fd);
  return found;
}

// The files on other executors that the checkpoints name, as they are there now; those whose
// executor cannot be reached are left out (and reported unavailable).
boost::asio::awaitable<sessions::CheckpointStore::Contents> remote_contents_now(Session& s, const std::vector<fs::path>& keys,
                                                                                std::map<fs::path, std::string>& unreachable) {
  sessions::CheckpointStore::Contents now;
  for (const auto& key : keys) {
    auto remote = remote_file_of(key);
    if (!remote) continue;
    auto ex = use_executor(s, remote->first);
    if (!ex) {
      unreachable[key] = "there is no executor '" + remote->first + "' now";
      continue;
    }
    auto got = co_await remote_content(*ex, remote->second);
    if (got.kept) now[key] = std::move(got.content);
    else unreachable[key] = "it cannot be read on executor '" + remote->first + "'";
  }
  co_return now;
}

// Puts one file on another executor back (the decision is `r`'s); `r` says how it went.
boost::asio::awaitable<void> restore_remote(Session& s, const FileBefore& f, FileRewound& r) {
  auto remote = remote_file_of(f.path);
  auto ex = use_executor(s, remote->first);
  try {
    if (!ex) throw ExecutorError("there is no executor '" + remote->first + "' now");
    if (f.content) co_await ex->write_file(remote->second, *f.content, nullptr);
    else co_await ex->remove_file(remote->second, nullptr);
  } catch (const ExecutorError& e) {
    r.action = "failed";
    r.error = e.what();
  }
}

}  // namespace

boost::asio::awaitable<FilesRewound> rewind_files(SessionHistory& history, std::shared_ptr<Session> session,
                                                  std::string message_id, bool dry_run, bool force) {
  Session& s = *session;
  if (message_id.empty()) throw AgentError(AgentError::Kind::InvalidParams, "'messageId' must not be empty");
  if (s.started) co_await s.started->wait();
  ConversationHold hold(s, "restoring files");
  auto store = checkpoints_of(s);
  if (!store) throw AgentError(AgentError::Kind::InvalidRequest, "This session is not saved: it has no file checkpoints");
  auto list = [store, message_id] { return store->changed_since(message_id); };
  auto changed = co_await history.on_journal_thread(std::move(list));
  std::map<fs::path, std::string> unreachable;
  const auto remote_now = co_await remote_contents_now(s, changed.value_or(std::vector<fs::path>{}), unreachable);
  // Local files are put back on the journal thread; those of other executors are only decided there.
  std::vector<std::pair<FileBefore, std::size_t>> remote;  // the file, its index in the answer
  auto job = [&, store]() -> std::optional<FilesRewound> {
    auto before = store->before(message_id, remote_now);
    if (!before && !journal_has(history.store(), s.id, message_id)) return std::nullopt;
    FilesRewound out;
    out.dropped = store->dropped();
    out.unkept_commands = store->unkept_commands_since(message_id);
    for (const auto& f : before.value_or(std::vector<FileBefore>{})) {
      if (auto why = unreachable.find(f.path); why != unreachable.end()) {
        out.files.push_back({f.path.string(), "unavailable", why->second});
      } else if (f.unchanged) {
        continue;
      } else if (remote_file_of(f.path)) {
        out.files.push_back(action_for(f, force));
        if (!dry_run && acts(out.files.back())) remote.emplace_back(f, out.files.size() - 1);
      } else {
        out.files.push_back(restore_one(*store, f, dry_run, force));
      }
    }
    return out;
  };
  auto done = co_await history.on_journal_thread(std::move(job));
  if (!done)
    throw AgentError(AgentError::Kind::InvalidParams, "Unknown messageId '" + message_id + "': no user message of this session has it");
  for (auto& [f, at] : remote) {
    co_await restore_remote(s, f, done->files[at]);
    if (done->files[at].action == "failed") continue;
    auto record = [store, path = f.path, content = f.content] { store->after_change(path, content); return true; };
    co_await history.on_journal_thread(std::move(record));  // the agent's now: a later rewind sees no conflict
  }
  spdlog::info("session {}: files {} to before message {}: {} file(s)", s.id, dry_run ? "checked for a restore" : "restored",
               message_id, done->files.size());
  co_return std::move(*done);
}

}  // namespace runtime
