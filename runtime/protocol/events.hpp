#pragma once
// What the engine reports while a session runs, in its own terms. The turn loop, the tool
// router and the session manager emit these; runtime/server maps them to the editor's protocol
// (live, and again for session/load replay from the journal), so no engine code knows a wire
// format (Codex's EventMsg, clangd's ClangdServer::Callbacks).
#include <boost/json.hpp>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace runtime {

// Why a prompt turn ended.
enum class StopReason { EndTurn, MaxTokens, MaxTurnRequests, Refusal, Cancelled };
const char* stop_reason_name(StopReason r);  // "end_turn", "max_tokens", ... (also the journal's)

// What kind of work a tool call does (the editor picks an icon and how to show it).
enum class ToolKind { Read, Edit, Delete, Move, Search, Execute, Think, Fetch, Other };
enum class ToolStatus { Pending, InProgress, Completed, Failed };

const char* tool_kind_name(ToolKind k);           // "read", "edit", ...
std::optional<ToolKind> tool_kind_from_name(std::string_view s);
const char* tool_status_name(ToolStatus s);       // "pending", "in_progress", ...
std::optional<ToolStatus> tool_status_from_name(std::string_view s);

struct ToolLocation {
  std::string path;
  std::optional<std::int64_t> line;
};

// What a tool call shows: text, a diff of a file, a live terminal, or a media/resource block
// (an MCP content block: image, audio, resource, resource_link).
struct TextContent {
  std::string text;
};
struct DiffContent {
  std::string path;
  std::optional<std::string> old_text;  // nullopt: a new file
  std::string new_text;
};
struct TerminalContent {
  std::string terminal_id;
};
struct BlockContent {
  boost::json::object block;  // an MCP ContentBlock
};
using ToolContent = std::variant<TextContent, DiffContent, TerminalContent, BlockContent>;

// A tool call's fields; an update sets only what changed (a set field replaces the old value).
struct ToolCallFields {
  std::optional<std::string> title;
  std::optional<std::string> name;  // the tool the model called (read_file, mcp__id__tool, ...)
  std::optional<ToolKind> kind;
  std::optional<ToolStatus> status;
  std::optional<std::vector<ToolLocation>> locations;
  std::optional<boost::json::value> raw_input;
  std::optional<boost::json::value> raw_output;
  std::optional<std::vector<ToolContent>> content;
  // Merges `update` into these fields.
  void merge(const ToolCallFields& update);
};

struct PlanEntry {
  std::string content;
  std::string status;  // pending | in_progress | completed
};

struct AvailableCommand {
  std::string name;
  std::string description;
  std::string input_hint;  // empty: takes no input
};

// ---- Events ----
// Chunks of one message carry its id (ACP messageId); empty: none known.
struct UserContent {  // a block of what the user sent (replay of a prompt)
  boost::json::object block;
  std::string message_id;
};
struct TextDelta {
  std::string text;
  std::string message_id;
};
struct ThoughtDelta {
  std::string text;
  std::string message_id;
};
struct ToolCallBegin {
  std::string id;
  ToolCallFields fields;
};
struct ToolCallUpdate {
  std::string id;
  ToolCallFields fields;
};
struct PlanShown {
  std::vector<PlanEntry> entries;
};
// Money (or another unit) spent by a session, from the model's price in the provider config.
struct Cost {
  double amount = 0;
  std::string currency;
};
struct ContextUsage {
  std::int64_t used = 0;
  std::int64_t size = 0;
  std::optional<Cost> cost;  // cumulative for the session; unset: the model has no price
};
// Something the user should know that is not the model's answer: a hook's message, a retry, an
// MCP server that failed. Live only: notices are never journaled, so session/load shows none.
enum class NoticeSeverity { Info, Warning, Error };
const char* notice_severity_name(NoticeSeverity s);  // "info", "warning", "error"
struct Notice {
  NoticeSeverity severity = NoticeSeverity::Info;
  std::string title;        // short plain text that stands alone, no final full stop
  std::string description;  // detail or guidance; empty: none
  std::string message_id;   // as chat text: its message id; empty: a message of its own, with a fresh id
};

// A context compaction, live (in_progress, then one end) or replayed from the journal (completed
// with its summary). Its summary streams live as CompactionSummaryDelta.
enum class CompactionStatus { InProgress, Completed, Failed, Cancelled };
const char* compaction_status_name(CompactionStatus s);  // "in_progress", "completed", ...
struct CompactionProgress {
  std::string id;  // unique within the session, the same live and replayed
  CompactionStatus status = CompactionStatus::InProgress;
  std::optional<std::string> summary;  // the whole summary (replay)
  std::string error;                   // why it failed
  std::size_t messages = 0;            // how many messages it replaced (completed, live)
};
struct CompactionSummaryDelta {
  std::string id;
  std::string text;
  std::string message_id;  // empty: a message of its own, with a fresh id
};
struct ModeChanged {
  std::string mode_id;
};
struct CommandsChanged {
  std::vector<AvailableCommand> commands;
};
struct TitleChanged {
  std::string title;
  std::string updated_at;  // ISO 8601, may be empty
};

// A sub-agent running as a session of its own (only for editors that show sub-agents), sent on
// its parent's session: first announced (running, with its name, task and folder) before
// anything of its own is sent, then its state when its work stops. Unset fields are unchanged.
struct SubagentChanged {
  enum class State { Unchanged, Running, Idle, Unknown };  // Unknown: it stopped with the server
  std::string session_id;  // the sub-agent's
  std::optional<std::string> title;        // the agent's name
  std::optional<std::string> description;  // its task
  std::optional<std::string> cwd;
  std::optional<std::string> tool_call_id;  // the spawn_agent call that runs it
  bool cancellable = false;                 // the editor may stop it alone (session/cancel)
  State state = State::Unchanged;
  std::string stop_reason;  // Idle: a stop_reason_name, or "error"
  std::string error;        // Idle with "error": what failed
};

// Replayed events that keep the session log's own JSON text instead of decoded values: session/load
// of a long session passes its text through rather than decoding and re-encoding every string.
// Each text was checked as JSON where it was read (support::raw_json); it is copied as it is.
struct JournalChunk {  // what UserContent, TextDelta and ThoughtDelta show
  enum class Kind { User, Agent, Thought };
  Kind kind = Kind::Agent;
  std::string json;        // User: the prompt's content block (an object); else the text (a JSON string)
  std::string message_id;  // a JSON string
};
struct JournalToolCall {  // what ToolCallBegin (or, with `update`, ToolCallUpdate) shows
  // The fields, by the names the log and the editor's protocol share, in the order they are sent.
  static constexpr std::array<std::string_view, 8> kFields = {"title",     "name",     "kind",      "status",
                                                              "locations", "rawInput", "rawOutput", "content"};
  static constexpr std::size_t kTitle = 0, kStatus = 3;
  std::string id;                                // decoded (an id the log wrote without escapes)
  std::array<std::string, kFields.size()> json;  // each field's JSON text; empty: not set
  bool update = false;
};

using SessionEvent = std::variant<UserContent, TextDelta, ThoughtDelta, ToolCallBegin, ToolCallUpdate, PlanShown,
                                  ContextUsage, Notice, CompactionProgress, CompactionSummaryDelta, ModeChanged,
                                  CommandsChanged, TitleChanged, SubagentChanged, JournalChunk, JournalToolCall>;

}  // namespace runtime
