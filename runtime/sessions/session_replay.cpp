// The editor's replay of a saved session, streamed from its log: a pass of its own over the file,
// a window at a time, independent of `load` (session_load.cpp), so the two can run side by side.
// Each shown record becomes the events session/load sends; a tool call is shown once, in its
// final state, where it began: the events after it wait until it finishes (a few lines later in a
// log a turn wrote), within a bound.
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <deque>
#include <map>
#include <set>

#include "runtime/sessions/detail.hpp"

namespace runtime::sessions {

namespace json = boost::json;

namespace {

constexpr std::size_t kWindowBytes = 256 * 1024;
// How much of the log may wait behind a tool call that has not finished: past it the call is
// shown as it stands and its later states follow as updates (a log where a call never ends
// would otherwise hold the rest of the session in memory).
constexpr std::size_t kHeldBytes = 1024 * 1024;

// The messageId the editor saw live; a journal from before message ids gets one from its line,
// the same on every load.
std::string message_id(const Message& m, std::uint32_t line_no) { return shown_message_id(m.id, line_no); }

bool is_final(const ToolCallFields& f) {
  return f.status && (*f.status == ToolStatus::Completed || *f.status == ToolStatus::Failed);
}
bool is_final(const JournalToolCall& c) {
  const std::string& status = c.json[JournalToolCall::kStatus];
  return status == "\"completed\"" || status == "\"failed\"";
}

// The id of the tool call `event` begins, if it begins one.
const std::string* begun_call(const SessionEvent& event) {
  if (const auto* b = std::get_if<ToolCallBegin>(&event)) return &b->id;
  if (const auto* j = std::get_if<JournalToolCall>(&event); j && !j->update) return &j->id;
  return nullptr;
}

// What a line written by the server shows, from its first bytes (detail::line_prefix): records
// the editor is not shown are skipped without being parsed. `ParseAndReport`: the records only
// this pass reads (load skips them), so a corrupt one is reported here.
enum class Seen { Parse, ParseAndReport, Skip, TurnEnd };
Seen seen_from_prefix(const std::optional<detail::LinePrefix>& prefix) {
  if (!prefix) return Seen::Parse;
  const std::string_view type = prefix->type;
  static constexpr std::array<std::string_view, 12> kNotShown = {"tool_result", "usage", "mode", "agent", "model",
                                                                 "thought_level", "title", "executor", "archive",
                                                                 "permission", "rewind", "header"};
  if (type == "turn_end") return Seen::TurnEnd;
  if (type == "tool_call" || type == "plan" || type == "subagent" || type == "subagent_message") return Seen::ParseAndReport;
  return std::find(kNotShown.begin(), kNotShown.end(), type) != kNotShown.end() ? Seen::Skip : Seen::Parse;
}

}  // namespace

struct Replay::Impl {
  std::string id;
  int fd = -1;
  Replay::Form form = Replay::Form::Decoded;
  std::uint64_t size = 0;  // what is replayed: the file's size when the replay was opened
  // The log read so far: [read_offset - window.size() + window_pos, read_offset) is not yet used.
  std::string window;
  std::size_t window_pos = 0;
  std::uint64_t read_offset = 0;
  std::uint64_t line_offset = 0;  // of the line next_line returned
  bool read_failed = false;
  // What rewinds dropped (rewinds.hpp), found at the first batch: those lines show nothing.
  std::optional<std::vector<DroppedSpan>> dropped_spans;
  std::uint32_t line_no = 0;
  std::uint32_t compactions = 0;
  std::set<std::string> running_children;  // sub-agent sessions announced and not ended
  detail::LineParser parser;

  // Events not yet returned, in order; `open` marks a tool call still waiting for its final
  // state, which holds back everything behind it.
  struct Held {
    SessionEvent event;
    bool open = false;
    std::size_t bytes = 0;  // of log
  };
  std::deque<Held> held;  // references stay valid as it grows at the back and shrinks at the front
  std::size_t held_bytes = 0;
  std::map<std::string, Held*, std::less<>> calls;  // tool calls not yet returned, by id
  std::set<std::string, std::less<>> shown_open;     // calls returned before they finished
  bool ended = false;                                 // the whole log was read and everything returned

  // The next line of the log and whether a '\n' ended it; nullopt at the end.
  std::optional<std::pair<std::string_view, bool>> next_line() {
    for (;;) {
      const std::string_view rest = std::string_view(window).substr(window_pos);
      const std::size_t nl = rest.find('\n');
      line_offset = read_offset - window.size() + window_pos;
      if (nl != std::string_view::npos) {
        window_pos += nl + 1;
        return std::pair{rest.substr(0, nl), true};
      }
      if (read_offset >= size || read_failed) {
        if (rest.empty()) return std::nullopt;
        window_pos = window.size();
        return std::pair{rest, false};  // a last line without its '\n' (load reads it too)
      }
      // Keep the partial line, read what follows it.
      window.erase(0, window_pos);
      window_pos = 0;
      const std::size_t have = window.size();
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kWindowBytes, size - read_offset));
      window.resize(have + want);
      ssize_t n;
      do n = ::pread(fd, window.data() + have, want, static_cast<off_t>(read_offset));
      while (n < 0 && errno == EINTR);
      if (n <= 0) {
        spdlog::warn("session {}: the log could not be read past byte {}; the replay stops there", id, read_offset);
        read_failed = true;
        n = 0;
      }
      window.resize(have + static_cast<std::size_t>(n));
      read_offset += static_cast<std::uint64_t>(n);
    }
  }

  void push(SessionEvent event, std::size_t bytes, bool open = false) {
    held.push_back(Held{std::move(event), open, bytes});
    held_bytes += bytes;
  }

  // A tool call that will not finish any more is shown as failed: no call runs once loaded.
  static void fail_unfinished(SessionEvent& call) {
    if (auto* b = std::get_if<ToolCallBegin>(&call); b && !is_final(b->fields)) b->fields.status = ToolStatus::Failed;
    if (auto* j = std::get_if<JournalToolCall>(&call); j && !is_final(*j)) j->json[JournalToolCall::kStatus] = "\"failed\"";
  }

  void close_open_calls() {
    for (auto& [_, h] : calls)
      if (h->open) {
        fail_unfinished(h->event);
        h->open = false;
      }
  }

  void tool_call_state(ToolCallState&& state, std::size_t bytes) {
    if (auto it = calls.find(state.tool_call_id); it != calls.end()) {
      // Begun as the log's text, now a state parsed from a line in another form: decode it first.
      if (auto* j = std::get_if<JournalToolCall>(&it->second->event))
        it->second->event = ToolCallBegin{j->id, detail::decoded_fields(*j, parser)};
      auto& fields = std::get<ToolCallBegin>(it->second->event).fields;
      fields.merge(state.fields);
      if (is_final(fields)) it->second->open = false;
      return;
    }
    if (auto it = shown_open.find(state.tool_call_id); it != shown_open.end()) {
      // Shown before it finished (the bound): the rest of it follows as an update.
      if (is_final(state.fields)) shown_open.erase(it);
      push(ToolCallUpdate{state.tool_call_id, std::move(state.fields)}, bytes);
      return;
    }
    const bool open = !is_final(state.fields);
    std::string id = state.tool_call_id;
    push(ToolCallBegin{std::move(state.tool_call_id), std::move(state.fields)}, bytes, open);
    calls.emplace(std::move(id), &held.back());
  }

  // A tool call's state as the log's text (JournalText form); false when the call is held
  // decoded (a line in another form began it): then the line is parsed as well.
  bool journal_tool_call_state(JournalToolCall&& state, std::size_t bytes) {
    if (auto it = calls.find(state.id); it != calls.end()) {
      auto* held_call = std::get_if<JournalToolCall>(&it->second->event);
      if (!held_call) return false;
      for (std::size_t i = 0; i < state.json.size(); ++i)
        if (!state.json[i].empty()) held_call->json[i] = std::move(state.json[i]);
      if (is_final(*held_call)) it->second->open = false;
      return true;
    }
    if (auto it = shown_open.find(state.id); it != shown_open.end()) {
      if (is_final(state)) shown_open.erase(it);
      state.update = true;
      push(std::move(state), bytes);
      return true;
    }
    const bool open = !is_final(state);
    std::string call_id = state.id;
    push(std::move(state), bytes, open);
    calls.emplace(std::move(call_id), &held.back());
    return true;
  }

  // The prompts, answers and tool calls the server wrote, read as the log's text (JournalText
  // form); false when the line must be parsed instead.
  bool journal_line(std::string_view type, std::string_view text, std::size_t bytes) {
    if (type == "tool_call") {
      JournalToolCall call;
      return detail::journal_tool_call(text, call) && journal_tool_call_state(std::move(call), bytes);
    }
    std::vector<JournalChunk> chunks;
    if (type == "user") {
      if (!detail::journal_user(text, line_no, chunks)) return false;
      close_open_calls();  // a new prompt read as text: as show() does for a decoded one
    } else if (type != "assistant" || !detail::journal_assistant(text, line_no, chunks)) {
      return false;
    }
    for (auto& c : chunks) push(std::move(c), bytes);
    return true;
  }

  void show(Record&& rec, std::size_t bytes) {
    std::visit(
        [&](auto&& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, UserMessage>) {
            close_open_calls();  // a new prompt: the turn before it ended, or the server died in it
            const std::string mid = message_id(r.message, line_no);
            if (!r.prompt.empty()) {
              for (auto& b : r.prompt)
                if (b.is_object()) push(UserContent{json::object(std::move(b.get_object()), json::storage_ptr()), mid}, bytes);
            } else {
              if (!r.message.text.empty()) push(UserContent{json::object{{"type", "text"}, {"text", r.message.text}}, mid}, bytes);
              for (const auto& img : r.message.images)
                push(UserContent{json::object{{"type", "image"}, {"mimeType", img.mime_type}, {"data", img.data_base64}}, mid},
                     bytes);
            }
          } else if constexpr (std::is_same_v<T, AssistantMessage> || std::is_same_v<T, SubagentMessage>) {
            // A sub-agent that ran inside this session was shown as this session's answers.
            const std::string mid = message_id(r.message, line_no);
            if (!r.message.reasoning.empty()) push(ThoughtDelta{std::move(r.message.reasoning), mid}, bytes);
            if (!r.message.text.empty()) push(TextDelta{std::move(r.message.text), mid}, bytes);
          } else if constexpr (std::is_same_v<T, ToolCallState>) {
            tool_call_state(std::move(r), bytes);
          } else if constexpr (std::is_same_v<T, Compaction>) {
            ++compactions;
            CompactionProgress shown{r.id.empty() ? "compaction-" + std::to_string(compactions) : r.id,
                                     CompactionStatus::Completed, std::nullopt, {}, 0};
            if (!r.summary.empty()) shown.summary = std::move(r.summary);
            push(std::move(shown), bytes);
          } else if constexpr (std::is_same_v<T, PlanUpdate>) {
            push(PlanShown{std::move(r.entries)}, bytes);
          } else if constexpr (std::is_same_v<T, SubagentRecord>) {
            if (r.change.state == SubagentChanged::State::Running) running_children.insert(r.change.session_id);
            else if (r.change.state != SubagentChanged::State::Unchanged) running_children.erase(r.change.session_id);
            push(std::move(r.change), bytes);
          } else if constexpr (std::is_same_v<T, TurnEnd>) {
            close_open_calls();  // a turn that ended has no call running
          }
        },
        rec.body);
  }

  // One line of the log into what it shows (corrupt lines: `load` reports them, here they show nothing).
  void line(std::string_view text) {
    ++line_no;
    if (dropped(*dropped_spans, line_offset)) return;
    const auto prefix = detail::line_prefix(text);
    const Seen seen = seen_from_prefix(prefix);
    if (seen == Seen::Skip) return;
    if (seen == Seen::TurnEnd) {
      close_open_calls();
      return;
    }
    if (form == Replay::Form::JournalText && prefix && journal_line(prefix->type, text, text.size() + 1)) return;
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) return;
    Record rec;
    try {
      rec = parser.parse(text);
    } catch (const std::invalid_argument& e) {
      if (seen == Seen::ParseAndReport) spdlog::warn("session {}: line {}: {}; not shown", id, line_no, e.what());
      return;
    }
    show(std::move(rec), text.size() + 1);
  }

  // Moves what no open tool call holds back into `out`; past the bound, the open call too.
  void release(std::vector<SessionEvent>& out) {
    while (!held.empty()) {
      Held& h = held.front();
      if (h.open && held_bytes <= kHeldBytes) return;
      if (const std::string* call = begun_call(h.event)) {
        if (h.open) shown_open.insert(*call);
        calls.erase(*call);
      }
      held_bytes -= h.bytes;
      out.push_back(std::move(h.event));
      held.pop_front();
    }
  }

  // At the end of the log: every call still open failed; sub-agents still running stopped with
  // the server, their outcome unknown.
  void finish(std::vector<SessionEvent>& out) {
    close_open_calls();
    release(out);
    for (const auto& call : shown_open) {
      ToolCallFields failed;
      failed.status = ToolStatus::Failed;
      out.push_back(ToolCallUpdate{call, std::move(failed)});
    }
    shown_open.clear();
    for (const auto& child : running_children) {
      SubagentChanged ended;
      ended.session_id = child;
      ended.state = SubagentChanged::State::Unknown;
      out.push_back(std::move(ended));
    }
    running_children.clear();
    std::string().swap(window);  // done reading
    ended = true;
  }
};

Replay::Replay(std::string id, int fd, Form form) : impl_(std::make_unique<Impl>()) {
  impl_->id = std::move(id);
  impl_->fd = fd;
  impl_->form = form;
  struct stat st{};
  impl_->size = ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

Replay::~Replay() {
  if (impl_->fd >= 0) ::close(impl_->fd);
}

bool Replay::done() const { return impl_->ended; }

std::vector<SessionEvent> Replay::next(std::size_t max_bytes) {
  Impl& r = *impl_;
  std::vector<SessionEvent> out;
  if (r.ended) return out;
  if (!r.dropped_spans) r.dropped_spans = rewound_spans(r.fd, r.size);
  // Go on until something is shown or the log is over, so that an empty batch means the end.
  std::size_t bytes = 0;
  while (bytes < max_bytes || out.empty()) {
    auto line = r.next_line();
    if (!line) {
      r.finish(out);
      break;
    }
    bytes += line->first.size() + 1;
    r.line(line->first);
    r.release(out);
  }
  return out;
}

std::vector<SessionEvent> Replay::rest() {
  std::vector<SessionEvent> all;
  for (auto batch = next(); !batch.empty(); batch = next())
    for (auto& e : batch) all.push_back(std::move(e));
  return all;
}

}  // namespace runtime::sessions
