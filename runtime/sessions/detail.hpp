#pragma once
// Internal to runtime/sessions: what the store, the loader, the replay and the writer share.
#include <boost/json.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sessions/session_store.hpp"

namespace runtime::sessions::detail {

[[noreturn]] void throw_errno(const std::string& what);
// fsync of a folder: the entries created in it survive a crash.
void fsync_dir(const std::filesystem::path& dir);

// Title candidate of a user message: the prompt's text blocks (what the user typed), else the text.
std::string user_title(const UserMessage& u);

// Parses one journal line into a record. Each line's JSON lives in a fresh monotonic resource
// (a reused one grows its blocks forever: release() does not reset the next block size),
// starting in a buffer reused from line to line. Throws std::invalid_argument for a line that is
// not a record (invalid JSON, not an object, a malformed or unknown record).
class LineParser {
 public:
  LineParser() : buffer_(32 * 1024) {}
  Record parse(std::string_view line);

 private:
  boost::json::parser parser_;
  std::vector<unsigned char> buffer_;
};

// Where a record's line is in the log: its byte range and its line number (1-based, counting
// blank and skipped lines: a journal from before message ids names its messages by line).
struct LineRef {
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
  std::uint32_t line_no = 0;
};

// One record of what session/load shows, kept as where its line is, not as its content: the
// replay reads it back from the log when it is sent (Replay::next).
struct ReplayStep {
  enum class Kind : std::uint8_t { User, Assistant, ToolCall, Compaction, Plan, Subagent };
  Kind kind = Kind::User;
  std::uint32_t ordinal = 0;  // Compaction: its number among the log's compaction records (1-based)
  LineRef line;               // the record (ToolCall: its first state)
  std::vector<LineRef> later;  // ToolCall: its later states, merged into the first in order
};

struct LoadOptions {
  bool conversation = true;  // build the conversation and the replay (false: only the summary)
};

// Reads a log line by line, each record replayed into the summary, the conversation and the
// replay plan. A corrupt or half-written line is skipped with a warning, tool calls left without
// a result are marked interrupted.
class Loader {
 public:
  Loader(std::string_view id, LoadOptions opt);
  ~Loader();
  // One line (without its '\n'), starting at `offset` in the log; `complete`: a '\n' ended it.
  void line(std::string_view text, std::uint64_t offset, bool complete);
  // The session read; `replay` (when building the conversation): the steps, for Replay.
  LoadedSession finish(std::vector<ReplayStep>* replay = nullptr, std::vector<std::string>* unknown_children = nullptr);

 private:
  struct State;
  std::unique_ptr<State> st_;
};

// Calls `on_line(text, offset, complete)` for each line of `text`.
void each_line(std::string_view text, const std::function<void(std::string_view, std::uint64_t, bool)>& on_line);
// The same over a file read in chunks of `chunk` bytes (a line longer than that is gathered
// whole), up to `limit` bytes when given. Returns the bytes read; false (and errno) when the
// file cannot be read.
bool each_line_of_fd(int fd, const std::function<void(std::string_view, std::uint64_t, bool)>& on_line,
                     std::uint64_t* size, std::size_t chunk = 256 * 1024);

// A session's log text read back: its summary only (no conversation, no replay).
LoadedSession load_text(std::string_view id, std::string_view text);

// A replay over the steps of `fd`'s log (Replay takes the descriptor).
std::shared_ptr<Replay> make_replay(std::string id, int fd, std::uint64_t size, std::vector<ReplayStep> steps,
                                    std::vector<std::string> unknown_children);

}  // namespace runtime::sessions::detail
