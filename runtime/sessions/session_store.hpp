#pragma once
// Sessions that survive: every session is an append-only JSON Lines file
// `<root>/<session id>.jsonl` (root = `<data dir>/sessions`, DESIGN §4), one record per line,
// plus a small sidecar index `<root>/<session id>.meta.json` rewritten with the one atomic writer
// at turn boundaries so that `list` reads only the sidecars.
//
// Durability: `SessionWriter::append` writes the whole line with one write(2) on an O_APPEND
// descriptor (the kernel has it before append returns; a kill -9 of the server loses nothing
// already appended, a power cut loses what came after the last fsync); `turn_boundary` fsyncs.
// `load` skips a corrupt or half-written line (wherever it is) with a warning, never fails on it.
//
// Everything here is synchronous and small; the caller may run it on a worker thread.
// load/list/remove are safe from any thread; the only state apart from the root is the listing's
// index (behind its own lock).
#include <boost/json.hpp>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "runtime/protocol/conversation.hpp"
#include "runtime/protocol/events.hpp"

namespace runtime::sessions {

namespace fs = std::filesystem;

// ---- Records (one per line: {"type": ..., "t": "<ISO 8601 UTC>", ...fields}) ----

// First line of every file.  {"type":"header","v":1,"id","cwd","agent","mode","parent"?}; its "t" is
// the creation time.
struct Header {
  std::string id;
  std::string cwd;
  std::string agent;
  std::string mode;  // a mode id (runtime::mode_id), kept as text
  // A sub-agent's session: the session whose spawn_agent call started it (empty otherwise).
  // Such sessions are not listed: the editor reaches them through their parent.
  std::string parent;
};

// A user prompt as given to the model.  `prompt` optionally keeps the ACP ContentBlocks the
// editor sent (what the user typed, before skills / AGENTS.md / hook context were added); the
// replay and the title use it when present, else the message's text and images.
struct UserMessage {
  Message message;  // role User
  boost::json::array prompt;
};

struct AssistantMessage {
  Message message;  // role Assistant: text, reasoning, tool calls
};

// What the editor was shown of a tool call. Several records with the same id merge like
// updates: a field that is set replaces the earlier value.
struct ToolCallState {
  std::string tool_call_id;
  ToolCallFields fields;
};

struct ToolResult {
  Message message;  // role Tool
};

struct ModeChange {
  std::string mode;
};

struct AgentChange {
  std::string agent;
};

// The model picked in the editor ("<provider id>/<model name>"), replacing the agent's.
struct ModelChange {
  std::string model;
};

// The session's default executor, picked in the editor or given by session/new.
struct ExecutorChange {
  std::string executor;
};

// The thought level picked in the editor (OpenAI reasoning_effort); empty: the model's default.
struct ThoughtLevelChange {
  std::string reasoning_effort;
};

// A title: set by the editor (session/set_title); an automatic title never replaces it.
struct TitleChange {
  std::string title;
};
// session/archive (true) and session/unarchive (false): hidden from a default session/list.
struct ArchiveChange {
  bool archived = true;
};

// An "Always allow" (true) / "Always reject" (false) answer remembered for an approval key
// (`bash:npm test`, `edit:<root>`, `mcp:<server>/<tool>`, `read:<folder>`), so that session/load
// and session/resume keep it. An empty key: every answer remembered so far is forgotten
// (`/permissions clear`).
struct PermissionMemory {
  std::string key;
  bool allowed = false;
};

struct UsageRecord {
  Usage usage;  // tokens of one model request (or one turn), summed on load
  std::optional<Cost> cost;  // what it cost, when the model had a price then
};

// Context compaction: from here on the conversation is `replacement` (or, when that is empty,
// one user message `kCompactionSummaryPrefix + summary`) followed by the last `kept` messages of
// the conversation before this record.  The editor's replay keeps the earlier items and shows the
// compaction there (CompactionProgress, completed, with its summary).
inline constexpr const char* kCompactionSummaryPrefix = "Summary of the earlier conversation:\n\n";
struct Compaction {
  std::string summary;
  std::vector<Message> replacement;
  std::uint32_t kept = 0;
  std::string id;  // the compaction id the editor saw live; empty in older logs ("compaction-<n>" then)
};

struct TurnEnd {
  std::string stop_reason;  // stop_reason_name(): "end_turn", "cancelled", ...
};

// The plan the agent showed (update_plan), replacing the previous plan.
struct PlanUpdate {
  std::vector<PlanEntry> entries;
};

// A sub-agent that ran as a session of its own (see SubagentChanged): its announcement and its
// end, replayed on the parent's session by session/load.
struct SubagentRecord {
  SubagentChanged change;
};

// What a sub-agent that ran inside its parent's session (the editor does not show sub-agent
// sessions) said, as the editor was shown it: replayed where it was said, never part of the
// parent's conversation. Its tool calls are the parent's tool_call records, as they were shown.
struct SubagentMessage {
  std::string agent_id;  // the spawn_agent call that ran it
  Message message;       // role Assistant: its id, text and reasoning
};

// _session/rewind: the user message with this id (the last one before this record that is not
// itself rewound) and everything after it up to here are gone from what the model sees and what
// session/load replays (rewinds.hpp). Nothing is deleted: the lines stay until compaction of the log.
struct Rewind {
  std::string message_id;
};

using RecordBody = std::variant<Header, UserMessage, AssistantMessage, ToolCallState, ToolResult, ModeChange,
                                AgentChange, ModelChange, ThoughtLevelChange, TitleChange, UsageRecord, Compaction, TurnEnd,
                                PlanUpdate, SubagentRecord, ExecutorChange, ArchiveChange, SubagentMessage, PermissionMemory,
                                Rewind>;

struct Record {
  RecordBody body;
  std::string time;  // ISO 8601 UTC with milliseconds; SessionWriter::append fills it when empty
};

// The "type" tag of a record ("header", "user", "assistant", "tool_call", "tool_result", "mode",
// "agent", "title", "usage", "compaction", "turn_end", "plan", "subagent", "executor", "archive",
// "subagent_message", "rewind").
const char* record_type(const RecordBody& body);

boost::json::object to_json(const Record& r);
// Throws std::invalid_argument on a malformed or unknown record.  The result owns its JSON
// (default memory resource), whatever resource `o` uses.
Record record_from_json(const boost::json::object& o);

boost::json::object message_to_json(const Message& m);
Message message_from_json(const boost::json::object& o);  // throws std::invalid_argument

// ---- Time ----

std::int64_t now_ms();                                       // wall clock, ms since the epoch
std::string iso8601(std::int64_t ms);                        // "2026-01-02T03:04:05.678Z"
std::optional<std::int64_t> parse_iso8601(std::string_view);  // the format above (ms optional)

// The automatic title: the first non-blank line of the text, trimmed, cut (UTF-8 safe) to
// `max_chars` code points with "…" appended when cut.
std::string title_from_text(std::string_view text, std::size_t max_chars = 80);

// ---- Loading ----

// What the editor is shown by session/load, in order: the prompts, answers, thoughts, tool
// calls (each in its final state), plans, compactions and sub-agent sessions (one still
// running when the log ends gets state Unknown: it stopped with the server).
//
// A pass of its own over the log, a window at a time and independent of `load`, so that both can
// run at once: `next` parses the next batch of lines and returns what they show, so the replay
// of a session of any length costs about one batch of memory (a tool call is shown where it
// began, in its final state: what follows it waits until it finishes, within a bound). It reads
// the file it was given (a session deleted or renamed meanwhile still replays), up to the size
// the file had then; corrupt lines show nothing (`load` reports them). Not thread-safe: one
// caller at a time (any thread).
//
// In `JournalText` form the prompts, answers and tool calls the server wrote come out as
// JournalChunk and JournalToolCall, their text kept as the log's JSON (what session/load sends,
// spliced unparsed); `Decoded` gives UserContent, TextDelta, ThoughtDelta, ToolCallBegin and
// ToolCallUpdate for them. Both show the same.
class Replay {
 public:
  enum class Form { Decoded, JournalText };
  Replay(std::string id, int fd, Form form);  // takes the descriptor
  ~Replay();
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  static constexpr std::size_t kBatchBytes = 256 * 1024;
  // The next events, from about `max_bytes` of the log (at least one record's); empty: no more.
  std::vector<SessionEvent> next(std::size_t max_bytes = kBatchBytes);
  // Every event not yet returned by next (tests, benchmarks).
  std::vector<SessionEvent> rest();
  bool done() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct LoadedSession {
  std::string id;
  std::string cwd;
  std::string agent;
  std::string mode;
  std::string parent;      // a sub-agent's session: its parent's id
  std::string model;       // the last model picked in the editor; empty: none was
  std::string reasoning_effort;  // the last thought level picked; empty: the model's default
  std::string executor;          // the last default executor given or picked; empty: none was
  std::string title;       // the title record, else from the first user message, else ""
  bool archived = false;   // the last archive record said so
  std::string created_at;  // ISO 8601
  std::string updated_at;  // ISO 8601: time of the last record
  std::map<std::string, bool> remembered_permissions;  // by approval key, after every permission record

  // What the model sees next: messages with compaction applied.  Tool calls that never got a
  // result (the server died mid-step) get an error result so the next request is well formed.
  std::vector<Message> conversation;
  // What the editor is shown by session/load (see Replay): read back from the log as it is sent,
  // so that a long session is not held twice in memory. Null when loaded for its summary only.
  std::shared_ptr<Replay> replay;
  int compactions = 0;              // compaction records
  Usage usage_total;
  std::optional<Usage> last_usage;
  std::map<std::string, double> cost;  // summed by currency
  int turns = 0;                    // turn_end records
  std::string last_stop_reason;     // of the last turn_end
  bool interrupted = false;         // a user message after the last turn_end (turn cut short)
  std::size_t records = 0;          // records read
  std::uint64_t log_bytes = 0;      // bytes of the log read
  std::size_t messages = 0;         // message records (user, assistant, tool result) read
  std::vector<std::string> warnings;  // skipped lines and repairs (also logged with spdlog)
};

// ---- Listing ----

struct SessionSummary {
  std::string id;
  std::string cwd;
  std::string title;  // may be empty: no user message yet
  std::string updated_at;
  std::int64_t updated_ms = 0;
  bool parent = false;  // a sub-agent's session
  bool archived = false;
};
// Which sessions `list` returns by their archive state (ACP SessionArchiveFilter).
enum class ArchiveFilter { Exclude, Include, Only };

struct ListPage {
  std::vector<SessionSummary> sessions;   // newest first (ties: by id)
  std::optional<std::string> next_cursor;  // absent: no more
};

// A cursor that is not one of ours (the editor sent a bad one).
struct InvalidCursor : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// A session id that cannot be a file name of the store ([A-Za-z0-9_.-]{1,128}, not starting
// with '.').
bool valid_session_id(std::string_view id);

class SessionWriter;

class SessionStore {
 public:
  explicit SessionStore(fs::path root);  // root = <data dir>/sessions; created on first write
  ~SessionStore();
  const fs::path& root() const { return root_; }

  fs::path file_of(std::string_view id) const;  // <root>/<id>.jsonl
  fs::path meta_of(std::string_view id) const;  // <root>/<id>.meta.json
  bool exists(std::string_view id) const;

  // A new session: writes the header (fsync'ed) and the sidecar.  Throws std::invalid_argument
  // for an invalid id, std::system_error when the file cannot be created or already exists.
  SessionWriter create(const Header& header);
  // Appending to an existing session (after load/resume).  If the file ends in a half-written
  // line, a newline is written first so that the next record starts on its own line.
  // Throws std::system_error if the session does not exist.
  SessionWriter open(std::string_view id);
  // The same for a session `load` just read: its summary is taken from `loaded` instead of
  // reading the log a second time.
  SessionWriter open(const LoadedSession& loaded);

  // nullopt: no such session (or an invalid id).  Never throws for bad content.
  std::optional<LoadedSession> load(std::string_view id) const;
  // The same without the conversation and the replay, quickly (the messages are not parsed): what
  // session/load answers with. `log_bytes` of the result says how much of the log it read.
  std::optional<LoadedSession> load_summary(std::string_view id) const;
  // The conversation of the first `summary.log_bytes` of a session's log, as `load` builds it
  // (what the next prompt sends the model); nullopt when the log cannot be read.
  std::optional<std::vector<Message>> load_conversation(const LoadedSession& summary) const;
  // The replay of a saved session on its own (what `load` also gives, decoded), for reading it
  // while the session loads; null when there is no such session.
  std::shared_ptr<Replay> open_replay(std::string_view id, Replay::Form form = Replay::Form::JournalText) const;

  // Newest first; `cwd` (compared after lexical normalisation) filters; `cursor` is a previous
  // page's next_cursor.  Throws InvalidCursor.  page_size 0 means "all".  The first page (no
  // cursor) shows the folder as it is now; the pages after it, the sessions as the first page
  // found them, less those removed since (a page costs what it returns).
  ListPage list(const std::optional<std::string>& cwd = std::nullopt,
                const std::optional<std::string>& cursor = std::nullopt, std::size_t page_size = 50,
                ArchiveFilter archived = ArchiveFilter::Exclude) const;

  // A new session `header.id` holding a copy of session `source`'s records (session/fork): every
  // line after the source's header, only the first `limit` bytes of its file when given (a turn
  // in flight: what came before it), then `tail`.  The header's agent and mode are the source's
  // (its records change them as they did in the source).  false: no such source.  Throws like
  // `create`.
  bool fork(std::string_view source, Header header, std::optional<std::uint64_t> limit,
            const std::vector<RecordBody>& tail);

  // Deletes the session's files (its file checkpoints, <root>/<id>.checkpoints/, too).  Idempotent;
  // returns whether something was removed.
  bool remove(std::string_view id);

 private:
  struct ListIndex;
  fs::path root_;
  std::unique_ptr<ListIndex> index_;
};

// Appends the records of one session.  Movable, not copyable; closes its descriptor on
// destruction (without fsync: call turn_boundary for that).  Thread-safe.
class SessionWriter {
 public:
  SessionWriter(SessionWriter&&) noexcept;
  SessionWriter& operator=(SessionWriter&&) noexcept;
  SessionWriter(const SessionWriter&) = delete;
  SessionWriter& operator=(const SessionWriter&) = delete;
  ~SessionWriter();

  const std::string& id() const { return id_; }
  const fs::path& file() const { return file_; }  // <root>/<id>.jsonl
  // The title the sidecar gets (title record, else the first user message's first line): after
  // appending the first prompt, what a session_info_update would carry.
  std::string title() const;
  std::string updated_at() const;  // time of the last record appended
  bool archived() const;
  std::uint64_t size() const;      // bytes in the file now

  // Writes the record as one line now (one write(2), O_APPEND).  Throws std::system_error.
  void append(Record record);
  void append(RecordBody body) { append(Record{std::move(body), {}}); }
  // Several records, a line each, in one write(2): all of them reach the file or none does (a
  // tool call's completed state and its result, written together on every call's path).
  void append_all(std::vector<RecordBody> bodies);
  // fsync the file and rewrite the sidecar index (title, updated time) atomically.
  void turn_boundary();
  // The session is being deleted: no sidecar is written from now on (a turn ending after
  // session/delete wrote an orphan <id>.meta.json). Nor is one for a log already unlinked.
  void mark_deleted();

 private:
  friend class SessionStore;
  SessionWriter(fs::path file, fs::path meta, std::string id);
  void write_line_locked(const std::string& line);
  void write_meta_locked(bool sync = true);
  void note_locked(const Record& record);  // what the sidecar learns from a record

  std::unique_ptr<std::mutex> mu_;
  int fd_ = -1;
  fs::path file_, meta_;
  std::string id_;
  // What the sidecar says.
  std::string cwd_, parent_, title_, created_at_, updated_at_;
  bool title_explicit_ = false;
  bool archived_ = false;
  bool torn_ = false;  // a failed write left part of a line that could not be cut off
  bool deleted_ = false;
  bool entry_synced_ = true;  // the folder was fsynced since the file was created (create() leaves it to the first turn end)
};

}  // namespace runtime::sessions
