#pragma once
// File checkpoints of a session (issue 36, _session/rewind_files): the content a file had before a
// tool of the agent changed it, keyed by the user message whose turn changed it, so that the files
// can be put back as they were before any message.
//
// Where: `<sessions>/<session id>.checkpoints/` beside the journal (DESIGN §4), deleted with the
// session. `index.jsonl` holds one line per event (a turn began, a file's content before its first
// change in a turn, the agent's last write, a content dropped by the bound), `blobs/<n>` the
// contents. Bounded: past `max_bytes` of contents the oldest are dropped (the index says so, and a
// restore that needed one reports the file as unavailable). Not thread-safe: one session's turn at
// a time uses it (the caller serialises). Throws std::runtime_error when the folder cannot be written.
#include <boost/json.hpp>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace runtime::sessions {

class CheckpointStore {
 public:
  static constexpr std::uint64_t kDefaultMaxBytes = 64ull << 20;
  // Reads what `dir` holds already (a session loaded again); writes nothing until a change.
  explicit CheckpointStore(std::filesystem::path dir, std::uint64_t max_bytes = kDefaultMaxBytes);

  // The turn of user message `message_id` begins: the changes from now on are its. Kept in memory
  // until the first change is written (a turn that changes nothing leaves no folder).
  void begin_message(const std::string& message_id);
  // `path` (absolute) is about to be changed by the turn of the last begun message; `content` is
  // what it holds now (nullopt: it does not exist). Only its first change in a turn is kept.
  void before_change(const std::filesystem::path& path, const std::optional<std::string>& content);
  // The same for a file whose content is not kept (too large): a restore reports it unavailable.
  void before_change_unkept(const std::filesystem::path& path);
  // A command of this turn ran on `executor`, where what commands change is not checkpointed: a
  // restore says so (once per turn and executor).
  void commands_unkept(const std::string& executor);
  // The executors where commands ran unkept from `message_id` on, sorted.
  std::vector<std::string> unkept_commands_since(const std::string& message_id) const;
  // `path` now holds `content` (nullopt: removed), written by the agent (or put back by a restore).
  void after_change(const std::filesystem::path& path, const std::optional<std::string>& content);

  // What putting the files back as they were before `message_id` needs: every file changed from
  // that message on, with its content then. nullopt: no such message was begun.
  struct FileBefore {
    std::filesystem::path path;
    bool available = true;               // false: its content was dropped by the bound
    std::optional<std::string> content;  // nullopt: it did not exist (the agent created it)
    bool changed_by_hand = false;        // it holds something else than the agent's last write now
    bool unchanged = false;              // it holds that content now: nothing to put back
  };
  // `now`: what files hold now where this machine cannot read them (another executor's, by key);
  // the others are read here.
  using Contents = std::map<std::filesystem::path, std::optional<std::string>>;
  std::optional<std::vector<FileBefore>> before(const std::string& message_id, const Contents& now = {}) const;
  // The files changed from `message_id` on (nullopt: no such message was begun).
  std::optional<std::vector<std::filesystem::path>> changed_since(const std::string& message_id) const;

  std::uint64_t bytes() const { return bytes_; }  // of contents kept
  std::size_t dropped() const { return dropped_; }  // contents dropped by the bound so far
  const std::filesystem::path& dir() const { return dir_; }

  // A stable hash of a file's content (nullopt: absent), to notice changes by hand.
  static std::string hash_of(const std::optional<std::string>& content);

 private:
  struct Change {
    std::size_t message = 0;  // index in messages_
    std::filesystem::path path;
    std::optional<std::uint64_t> blob;  // nullopt: the file did not exist
    std::uint64_t size = 0;
    bool dropped = false;
  };
  std::optional<std::size_t> message_index(const std::string& message_id) const;  // the last begun with it
  void load();
  void append(const std::string& line);
  void flush_marks();
  void make_room(std::uint64_t size);
  bool seen_in_turn(const std::filesystem::path& path) const;
  void add(Change c, boost::json::object line);
  std::optional<std::string> blob_content(const Change& c) const;

  std::filesystem::path dir_;
  std::uint64_t max_bytes_;
  std::vector<std::string> messages_;  // begun, in order
  std::size_t written_marks_ = 0;      // messages_ already in the index
  std::vector<Change> changes_;        // in order
  std::vector<std::pair<std::size_t, std::string>> unkept_commands_;  // message index, executor
  std::map<std::filesystem::path, std::string> last_write_;  // hash of the agent's last write, by file
  std::uint64_t next_blob_ = 0;
  std::uint64_t bytes_ = 0;
  std::size_t dropped_ = 0;
};

}  // namespace runtime::sessions
