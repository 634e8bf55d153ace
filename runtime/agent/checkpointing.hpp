#pragma once
// The file checkpoints the tools take (issue 36, runtime/sessions/checkpoints.hpp): before a call
// runs, what the files it will change hold; after it, what they hold then. The edit tools
// (apply_patch) name their files in their approval request, on any executor: a file on another
// executor is read and put back there, keyed "@<executor>:<path there>" (remote_file_key). For
// bash in a git work tree on `local` the files git does not ignore are compared before and after
// the command (GitSnapshot in checkpointing.cpp); commands on other executors are not
// checkpointed (docs/editors.md says so).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/agent/session.hpp"
#include "runtime/tools/tool.hpp"

namespace runtime {

// The session's checkpoint store, made at first use beside its journal (its folder at the first
// change); null without a journal.
std::shared_ptr<sessions::CheckpointStore> checkpoints_of(Session& session);

// A turn of user message `message_id` begins: its file changes are checkpointed under that id.
// The store is made here (beside the journal, its folder at the first change); none without a journal.
void checkpoint_turn_start(Session& session, const std::string& message_id);

// A file on another executor in the checkpoint store: "@<executor>:<path there>", never an
// absolute local path; and back (nullopt: a local path).
std::filesystem::path remote_file_key(const std::string& executor, const std::string& path);
std::optional<std::pair<std::string, std::string>> remote_file_of(const std::filesystem::path& key);

// What a file on `ex` holds for a checkpoint: `kept` false when it cannot be kept (a folder, too
// large, unreadable: a restore reports it unavailable); `content` nullopt when it does not exist.
struct RemoteContent {
  bool kept = true;
  std::optional<std::string> content;
};
boost::asio::awaitable<RemoteContent> remote_content(Executor& ex, const std::string& path);

struct GitSnapshot;

// One tool call's checkpoint: `take` before run(), `finish` after it.
class FileCheckpoint {
 public:
  // Nothing is taken for a call that is not on local, changes no file, or a session without a store.
  static boost::asio::awaitable<FileCheckpoint> take(Session& session, const ToolEnv& env, const std::string& tool,
                                                     tools::Permission permission,
                                                     std::vector<std::filesystem::path> edits,
                                                     boost::asio::thread_pool& pool);
  boost::asio::awaitable<void> finish();

 private:
  static boost::asio::awaitable<FileCheckpoint> take_remote(Session& session, const ToolEnv& env, bool bash,
                                                            tools::Permission permission,
                                                            std::vector<std::filesystem::path> edits);
  std::shared_ptr<sessions::CheckpointStore> store_;
  boost::asio::thread_pool* pool_ = nullptr;
  std::vector<std::filesystem::path> edits_;  // the files an edit tool changes
  std::shared_ptr<GitSnapshot> git_;  // bash in a git work tree: what it held before (checkpointing.cpp)
  std::shared_ptr<Executor> remote_;  // the edits are there (not on local)
};

}  // namespace runtime
