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

// What is done with one file (`dry_run`: what would be).
FileRewound restore_one(sessions::CheckpointStore& store, const sessions::CheckpointStore::FileBefore& f, bool dry_run,
                        bool force) {
  FileRewound out{f.path.string(), f.content ? "restore" : "delete", {}};
  if (!f.available) out.action = "unavailable";
  else if (f.changed_by_hand && !force) out.action = "conflict";
  if (dry_run || out.action == "unavailable" || out.action == "conflict") return out;
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

}  // namespace

boost::asio::awaitable<FilesRewound> rewind_files(SessionHistory& history, std::shared_ptr<Session> session,
                                                  std::string message_id, bool dry_run, bool force) {
  Session& s = *session;
  if (message_id.empty()) throw AgentError(AgentError::Kind::InvalidParams, "'messageId' must not be empty");
  if (s.started) co_await s.started->wait();
  ConversationHold hold(s, "restoring files");
  auto store = checkpoints_of(s);
  if (!store) throw AgentError(AgentError::Kind::InvalidRequest, "This session is not saved: it has no file checkpoints");
  auto job = [&history, store, id = s.id, message_id, dry_run, force]() -> std::optional<FilesRewound> {
    auto before = store->before(message_id);
    if (!before && !journal_has(history.store(), id, message_id)) return std::nullopt;
    FilesRewound out;
    out.dropped = store->dropped();
    for (const auto& f : before.value_or(std::vector<sessions::CheckpointStore::FileBefore>{}))
      if (!f.unchanged) out.files.push_back(restore_one(*store, f, dry_run, force));
    return out;
  };
  auto done = co_await history.on_journal_thread(std::move(job));
  if (!done)
    throw AgentError(AgentError::Kind::InvalidParams, "Unknown messageId '" + message_id + "': no user message of this session has it");
  spdlog::info("session {}: files {} to before message {}: {} file(s)", s.id, dry_run ? "checked for a restore" : "restored",
               message_id, done->files.size());
  co_return std::move(*done);
}

}  // namespace runtime
