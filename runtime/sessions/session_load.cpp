// Reading a session's log back: each record replayed into the summary, the conversation (with
// compactions) and the editor's replay, and the repairs a cut-short log needs.
#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "runtime/sessions/detail.hpp"

namespace runtime::sessions::detail {

namespace json = boost::json;

namespace {

constexpr const char* kInterruptedResult =
    "The tool call did not finish: the agent stopped before its result was recorded.";

// `log`: false for the summary scans of open() and list(), which stay quiet (load reports the
// same lines when the session is opened).
void warn(LoadedSession& s, std::string msg, bool log = true) {
  if (log) spdlog::warn("session {}: {}", s.id, msg);
  s.warnings.push_back(std::move(msg));
}

// Every assistant tool call gets a result: the ones the server died before answering get an
// error result, placed after the results that were recorded.
void repair_tool_results(LoadedSession& s) {
  std::vector<Message>& conv = s.conversation;
  std::vector<Message> out;
  out.reserve(conv.size());
  std::size_t repaired = 0;
  for (std::size_t i = 0; i < conv.size();) {
    out.push_back(std::move(conv[i]));
    const Message& a = out.back();
    ++i;
    if (a.role != Message::Role::Assistant || a.tool_calls.empty()) continue;
    const std::vector<ToolCall> calls = a.tool_calls;
    std::set<std::string> answered;
    while (i < conv.size() && conv[i].role == Message::Role::Tool) {
      answered.insert(conv[i].tool_call_id);
      out.push_back(std::move(conv[i]));
      ++i;
    }
    for (const auto& tc : calls) {
      if (answered.count(tc.id)) continue;
      Message r;
      r.role = Message::Role::Tool;
      r.tool_call_id = tc.id;
      r.text = kInterruptedResult;
      r.is_error = true;
      out.push_back(std::move(r));
      ++repaired;
    }
  }
  conv = std::move(out);
  if (repaired) warn(s, std::to_string(repaired) + " tool call(s) without a result were marked as interrupted");
}

// The messageId the editor saw live; a journal from before message ids gets one from its line,
// the same on every load.
std::string line_message_id(std::size_t line_no) { return "msg_line" + std::to_string(line_no); }
std::string message_id(const Message& m, std::size_t line_no) { return m.id.empty() ? line_message_id(line_no) : m.id; }

}  // namespace

// Title candidate of a user message: the prompt's text blocks (what the user typed), else the text.
std::string user_title(const UserMessage& u) {
  for (const auto& b : u.prompt) {
    if (!b.is_object()) continue;
    const auto& o = b.get_object();
    auto t = o.find("type");
    auto x = o.find("text");
    if (t != o.end() && t->value() == "text" && x != o.end() && x->value().is_string()) {
      std::string title = title_from_text(x->value().get_string());
      if (!title.empty()) return title;
    }
  }
  return title_from_text(u.message.text);
}


LoadedSession load_text(std::string_view id, std::string_view text, LoadOptions opt) {
  LoadedSession s;
  auto note = [&](std::string msg) { warn(s, std::move(msg), opt.conversation); };
  s.id = std::string(id);
  bool have_header = false;
  bool title_explicit = false;
  std::map<std::string, std::size_t> tool_index;  // toolCallId -> index in s.replay
  std::set<std::string> running_children;        // sub-agent sessions announced and not ended
  std::size_t line_no = 0;

  json::parser parser;
  // One line's JSON lives in a fresh monotonic resource (a reused one grows its blocks forever:
  // release() does not reset the next block size), starting in this buffer.
  std::vector<unsigned char> line_buffer(32 * 1024);
  while (!text.empty()) {
    ++line_no;
    const std::size_t nl = text.find('\n');
    const bool complete = nl != std::string_view::npos;
    const std::string_view line = text.substr(0, nl);
    text = complete ? text.substr(nl + 1) : std::string_view{};
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;

    Record rec;
    json::monotonic_resource line_memory(line_buffer.data(), line_buffer.size());
    struct ParserDone {  // drops what the parser holds while line_memory still lives
      json::parser& p;
      ~ParserDone() { p.reset(); }
    } parser_done{parser};
    try {
      parser.reset(&line_memory);
      boost::system::error_code ec;
      parser.write(line.data(), line.size(), ec);
      if (ec) throw std::invalid_argument("invalid JSON (" + ec.message() + ")");
      json::value v = parser.release();
      if (!v.is_object()) throw std::invalid_argument("not a JSON object");
      rec = record_from_json(v.get_object());
    } catch (const std::invalid_argument& e) {  // not std::bad_alloc: running out of memory is no corrupt line
      note("line " + std::to_string(line_no) + ": " + e.what() +
                  (complete ? "; skipped" : "; half-written last line skipped"));
      continue;
    }
    ++s.records;
    if (parse_iso8601(rec.time)) s.updated_at = rec.time;  // the last record's time

    std::visit(
        [&](auto&& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, Header>) {
            if (have_header) {
              note("line " + std::to_string(line_no) + ": a second header; ignored");
              return;
            }
            have_header = true;
            if (!r.id.empty() && r.id != s.id)
              note("line " + std::to_string(line_no) + ": header is for session " + r.id);
            s.cwd = std::move(r.cwd);
            s.agent = std::move(r.agent);
            s.mode = std::move(r.mode);
            s.parent = std::move(r.parent);
            s.created_at = rec.time;
          } else if constexpr (std::is_same_v<T, UserMessage>) {
            s.interrupted = true;
            const std::string id = message_id(r.message, line_no);
            if (!title_explicit && s.title.empty()) s.title = user_title(r);
            if (!opt.conversation) return;
            if (!r.prompt.empty()) {
              for (auto& b : r.prompt)
                if (b.is_object()) s.replay.push_back(UserContent{json::object(b.get_object(), json::storage_ptr()), id});
            } else {
              if (!r.message.text.empty())
                s.replay.push_back(UserContent{json::object{{"type", "text"}, {"text", r.message.text}}, id});
              for (const auto& img : r.message.images)
                s.replay.push_back(UserContent{
                    json::object{{"type", "image"}, {"mimeType", img.mime_type}, {"data", img.data_base64}}, id});
            }
            s.conversation.push_back(std::move(r.message));
          } else if constexpr (std::is_same_v<T, AssistantMessage>) {
            if (!opt.conversation) return;
            const std::string id = message_id(r.message, line_no);
            if (!r.message.reasoning.empty()) s.replay.push_back(ThoughtDelta{r.message.reasoning, id});
            if (!r.message.text.empty()) s.replay.push_back(TextDelta{r.message.text, id});
            s.conversation.push_back(std::move(r.message));
          } else if constexpr (std::is_same_v<T, ToolCallState>) {
            if (!opt.conversation) return;
            auto it = tool_index.find(r.tool_call_id);
            if (it != tool_index.end()) {
              std::get<ToolCallBegin>(s.replay[it->second]).fields.merge(r.fields);
            } else {
              tool_index.emplace(r.tool_call_id, s.replay.size());
              s.replay.push_back(ToolCallBegin{std::move(r.tool_call_id), std::move(r.fields)});
            }
          } else if constexpr (std::is_same_v<T, ToolResult>) {
            if (opt.conversation) s.conversation.push_back(std::move(r.message));
          } else if constexpr (std::is_same_v<T, ModeChange>) {
            s.mode = std::move(r.mode);
          } else if constexpr (std::is_same_v<T, AgentChange>) {
            s.agent = std::move(r.agent);
          } else if constexpr (std::is_same_v<T, ModelChange>) {
            s.model = std::move(r.model);
          } else if constexpr (std::is_same_v<T, ExecutorChange>) {
            s.executor = std::move(r.executor);
          } else if constexpr (std::is_same_v<T, ThoughtLevelChange>) {
            s.reasoning_effort = std::move(r.reasoning_effort);
          } else if constexpr (std::is_same_v<T, ArchiveChange>) {
            s.archived = r.archived;
          } else if constexpr (std::is_same_v<T, TitleChange>) {
            s.title = std::move(r.title);
            title_explicit = true;
          } else if constexpr (std::is_same_v<T, UsageRecord>) {
            s.usage_total += r.usage;
            s.last_usage = r.usage;
            if (r.cost) s.cost[r.cost->currency] += r.cost->amount;
          } else if constexpr (std::is_same_v<T, Compaction>) {
            ++s.compactions;
            if (!opt.conversation) return;
            std::vector<Message> next = std::move(r.replacement);
            if (next.empty()) {
              Message m;
              m.role = Message::Role::User;
              m.text = std::string(kCompactionSummaryPrefix) + r.summary;
              next.push_back(std::move(m));
            }
            const std::size_t kept = std::min<std::size_t>(r.kept, s.conversation.size());
            for (std::size_t i = s.conversation.size() - kept; i < s.conversation.size(); ++i)
              next.push_back(std::move(s.conversation[i]));
            s.conversation = std::move(next);
            CompactionProgress shown{r.id.empty() ? "compaction-" + std::to_string(s.compactions) : r.id,
                                     CompactionStatus::Completed, std::nullopt, {}, 0};
            if (!r.summary.empty()) shown.summary = std::move(r.summary);
            s.replay.push_back(std::move(shown));
          } else if constexpr (std::is_same_v<T, TurnEnd>) {
            ++s.turns;
            s.last_stop_reason = std::move(r.stop_reason);
            s.interrupted = false;
          } else if constexpr (std::is_same_v<T, PlanUpdate>) {
            if (!opt.conversation) return;
            s.replay.push_back(PlanShown{std::move(r.entries)});
          } else if constexpr (std::is_same_v<T, SubagentRecord>) {
            if (!opt.conversation) return;
            if (r.change.state == SubagentChanged::State::Running) running_children.insert(r.change.session_id);
            else if (r.change.state != SubagentChanged::State::Unchanged) running_children.erase(r.change.session_id);
            s.replay.push_back(std::move(r.change));
          }
        },
        rec.body);
  }
  if (!have_header) note("no header record: cwd, agent and mode are unknown");
  if (opt.conversation) {
    repair_tool_results(s);
    // A sub-agent still running when the log ends stopped with the server: its outcome is unknown.
    for (const auto& child : running_children) {
      SubagentChanged ended;
      ended.session_id = child;
      ended.state = SubagentChanged::State::Unknown;
      s.replay.push_back(std::move(ended));
    }
    // No tool call is running once the session is loaded: one without a final status failed.
    for (auto& event : s.replay) {
      auto* call = std::get_if<ToolCallBegin>(&event);
      if (!call) continue;
      const auto& st = call->fields.status;
      if (!st || (*st != ToolStatus::Completed && *st != ToolStatus::Failed)) call->fields.status = ToolStatus::Failed;
    }
  }
  return s;
}

}  // namespace runtime::sessions::detail
