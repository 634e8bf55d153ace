#pragma once
// Internal to runtime/sessions: what the store, the loader, the replay and the writer share.
#include <boost/json.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sessions/rewinds.hpp"
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

// The type and time a line written by the server starts with (`{"type":"…","t":"…"`, the order
// to_json writes them in), read without parsing the line: a pass skips the records it does not
// need by them. Nullopt for a line that starts otherwise (a pass then parses it); `time` is empty
// when the type is not followed by a time.
struct LinePrefix {
  std::string_view type;
  std::string_view time;
};
std::optional<LinePrefix> line_prefix(std::string_view line);

// The replay's reading of a user, assistant or tool_call line as JSON text, checked and not
// decoded (journal_text.cpp): what it shows is appended to `out` (or written to it). False when
// the line is not in the form the server writes (nothing appended): the record parser reads it.
bool journal_user(std::string_view line, std::uint32_t line_no, std::vector<JournalChunk>& out);
bool journal_assistant(std::string_view line, std::uint32_t line_no, std::vector<JournalChunk>& out);
bool journal_tool_call(std::string_view line, JournalToolCall& out);
// A journal tool call's fields decoded, to merge a state the record parser read into it.
ToolCallFields decoded_fields(const JournalToolCall& call, LineParser& parser);

struct LoadOptions {
  bool conversation = true;  // build the conversation (false: only the summary)
  std::size_t messages = 0;  // the message records a summary counted: room for them up front
  std::vector<DroppedSpan> dropped;  // what rewinds dropped (rewinds.hpp): lines there are skipped
};

// Reads a log line by line, each record replayed into the summary and the conversation (what the
// editor is shown is Replay's own pass). A corrupt or half-written line is skipped with a warning, tool calls left without
// a result are marked interrupted.
class Loader {
 public:
  Loader(std::string_view id, LoadOptions opt);
  ~Loader();
  // One line (without its '\n'); `complete`: a '\n' ended it; `offset`: where it starts in the log.
  void line(std::string_view text, bool complete, std::uint64_t offset = std::numeric_limits<std::uint64_t>::max());
  LoadedSession finish();

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
                     std::uint64_t* size, std::size_t chunk = 256 * 1024,
                     std::uint64_t limit = std::numeric_limits<std::uint64_t>::max());

// A session's log text read back: its summary only (no conversation, no replay).
LoadedSession load_text(std::string_view id, std::string_view text);

}  // namespace runtime::sessions::detail
