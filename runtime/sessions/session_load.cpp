// Reading a session's log back: each record replayed into the summary and the conversation (with
// compactions), and the repairs a cut-short log needs. What the editor is shown is read by a pass
// of its own (session_replay.cpp).
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cerrno>
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
  // Nearly always nothing is missing: then the conversation is not copied (a long session's
  // messages would be held twice for a moment).
  bool missing = false;
  for (std::size_t i = 0; i < conv.size() && !missing;) {
    const Message& a = conv[i++];
    if (a.role != Message::Role::Assistant || a.tool_calls.empty()) continue;
    std::size_t answered = 0;
    for (std::size_t j = i; j < conv.size() && conv[j].role == Message::Role::Tool; ++j) ++answered;
    if (answered < a.tool_calls.size()) {
      missing = true;
      break;
    }
    // As many results as calls; they must also answer these calls, one each.
    std::set<std::string> ids;
    for (std::size_t j = i; j < i + answered; ++j) ids.insert(conv[j].tool_call_id);
    for (const auto& tc : a.tool_calls) missing = missing || !ids.count(tc.id);
  }
  if (!missing) return;
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


std::optional<LinePrefix> line_prefix(std::string_view line) {
  static constexpr std::string_view kType = R"({"type":")", kTime = R"(","t":")";
  if (!line.starts_with(kType)) return std::nullopt;
  line.remove_prefix(kType.size());
  const std::size_t end = line.find('"');
  if (end == std::string_view::npos) return std::nullopt;
  LinePrefix p{line.substr(0, end), {}};
  line.remove_prefix(end);
  if (line.starts_with(kTime)) {
    line.remove_prefix(kTime.size());
    if (const std::size_t t = line.find('"'); t != std::string_view::npos) p.time = line.substr(0, t);
  }
  return p;
}

Record LineParser::parse(std::string_view line) {
  json::monotonic_resource line_memory(buffer_.data(), buffer_.size());
  struct ParserDone {  // drops what the parser holds while line_memory still lives
    json::parser& p;
    ~ParserDone() { p.reset(); }
  } parser_done{parser_};
  parser_.reset(&line_memory);
  boost::system::error_code ec;
  parser_.write(line.data(), line.size(), ec);
  if (ec) throw std::invalid_argument("invalid JSON (" + ec.message() + ")");
  json::value v = parser_.release();
  if (!v.is_object()) throw std::invalid_argument("not a JSON object");
  return record_from_json(v.get_object());
}

struct Loader::State {
  LoadedSession s;
  LoadOptions opt;
  bool have_header = false;
  bool title_explicit = false;
  std::uint32_t line_no = 0;
  LineParser parser;

  void note(std::string msg) { warn(s, std::move(msg), opt.conversation); }

  // Lines taken by their prefix, not parsed: what only the editor's replay shows (the bulk of a
  // log: tool calls carry their output; Replay's pass reads them and reports them when corrupt),
  // and for a summary the messages too, but for the user message the title comes from.
  bool read_unparsed(const LinePrefix& p) const {
    if (p.type == "tool_call" || p.type == "plan" || p.type == "subagent" || p.type == "subagent_message") return true;
    if (opt.conversation) return false;
    if (p.type == "assistant" || p.type == "tool_result" || p.type == "compaction") return true;
    return p.type == "user" && (title_explicit || !s.title.empty());
  }
  // A line read_unparsed took: counted by its prefix alone.
  void count_unparsed(const LinePrefix& p);
  // A parsed record applied to the summary and, when loaded, the conversation.
  void apply(Record& rec, std::uint32_t line_no);
  void apply_header(Header& h, const std::string& time, std::uint32_t line_no);
  void apply_compaction(Compaction& c);
};

void Loader::State::count_unparsed(const LinePrefix& p) {
  ++s.records;
  if (parse_iso8601(p.time)) s.updated_at = std::string(p.time);
  if (p.type == "user") s.interrupted = true;  // as in apply
  else if (p.type == "compaction") ++s.compactions;
  if (p.type == "user" || p.type == "assistant" || p.type == "tool_result") ++s.messages;
}

void Loader::State::apply_header(Header& h, const std::string& time, std::uint32_t line_no) {
  if (have_header) {
    note("line " + std::to_string(line_no) + ": a second header; ignored");
    return;
  }
  have_header = true;
  if (!h.id.empty() && h.id != s.id) note("line " + std::to_string(line_no) + ": header is for session " + h.id);
  s.cwd = std::move(h.cwd);
  s.agent = std::move(h.agent);
  s.mode = std::move(h.mode);
  s.parent = std::move(h.parent);
  s.created_at = time;
}

// The conversation continues from the summary (or the replacement messages) and the last
// `kept` messages.
void Loader::State::apply_compaction(Compaction& c) {
  ++s.compactions;
  if (!opt.conversation) return;
  std::vector<Message> next = std::move(c.replacement);
  if (next.empty()) {
    Message m;
    m.role = Message::Role::User;
    m.text = std::string(kCompactionSummaryPrefix) + c.summary;
    next.push_back(std::move(m));
  }
  const std::size_t kept = std::min<std::size_t>(c.kept, s.conversation.size());
  for (std::size_t i = s.conversation.size() - kept; i < s.conversation.size(); ++i)
    next.push_back(std::move(s.conversation[i]));
  s.conversation = std::move(next);
}

void Loader::State::apply(Record& rec, std::uint32_t line_no) {
  std::visit(
      [&](auto&& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, Header>) {
          apply_header(r, rec.time, line_no);
        } else if constexpr (std::is_same_v<T, UserMessage>) {
          ++s.messages;
          s.interrupted = true;
          if (!title_explicit && s.title.empty()) s.title = user_title(r);
          if (opt.conversation) s.conversation.push_back(std::move(r.message));
        } else if constexpr (std::is_same_v<T, AssistantMessage> || std::is_same_v<T, ToolResult>) {
          ++s.messages;
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
        } else if constexpr (std::is_same_v<T, PermissionMemory>) {
          if (r.key.empty()) s.remembered_permissions.clear();
          else s.remembered_permissions[r.key] = r.allowed;
        } else if constexpr (std::is_same_v<T, TitleChange>) {
          s.title = std::move(r.title);
          title_explicit = true;
        } else if constexpr (std::is_same_v<T, UsageRecord>) {
          s.usage_total += r.usage;
          s.last_usage = r.usage;
          if (r.cost) s.cost[r.cost->currency] += r.cost->amount;
        } else if constexpr (std::is_same_v<T, Compaction>) {
          apply_compaction(r);
        } else if constexpr (std::is_same_v<T, TurnEnd>) {
          ++s.turns;
          s.last_stop_reason = std::move(r.stop_reason);
          s.interrupted = false;
        }
      },
      rec.body);
}

Loader::Loader(std::string_view id, LoadOptions opt) : st_(std::make_unique<State>()) {
  st_->s.id = std::string(id);
  st_->opt = opt;
  // A long session's conversation would otherwise grow by doubling: at its last step the old
  // and the new array are both alive, several MiB more at the load's peak.
  if (opt.conversation) st_->s.conversation.reserve(opt.messages);
}

Loader::~Loader() = default;

void Loader::line(std::string_view line, bool complete, std::uint64_t offset) {
  State& st = *st_;
  LoadedSession& s = st.s;
  const std::uint32_t line_no = ++st.line_no;
  if (dropped(st.opt.dropped, offset)) return;  // rewound: as if it had never been said
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  // A half-written last line is parsed, so that it is reported and skipped.
  if (auto p = complete ? line_prefix(line) : std::nullopt; p && st.read_unparsed(*p)) return st.count_unparsed(*p);

  Record rec;
  try {
    rec = st.parser.parse(line);
  } catch (const std::invalid_argument& e) {  // not std::bad_alloc: running out of memory is no corrupt line
    st.note("line " + std::to_string(line_no) + ": " + e.what() +
            (complete ? "; skipped" : "; half-written last line skipped"));
    return;
  }
  ++s.records;
  if (parse_iso8601(rec.time)) s.updated_at = rec.time;  // the last record's time
  st.apply(rec, line_no);
}

LoadedSession Loader::finish() {
  State& st = *st_;
  if (!st.have_header) st.note("no header record: cwd, agent and mode are unknown");
  if (st.opt.conversation) repair_tool_results(st.s);
  return std::move(st.s);
}

void each_line(std::string_view text, const std::function<void(std::string_view, std::uint64_t, bool)>& on_line) {
  std::uint64_t offset = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const bool complete = nl != std::string_view::npos;
    on_line(text.substr(0, nl), offset, complete);
    const std::size_t used = complete ? nl + 1 : text.size();
    text.remove_prefix(used);
    offset += used;
  }
}

bool each_line_of_fd(int fd, const std::function<void(std::string_view, std::uint64_t, bool)>& on_line,
                     std::uint64_t* size, std::size_t chunk, std::uint64_t limit) {
  std::string buf;       // [buf_offset, buf_offset + buf.size()) of the file: a partial line, then what was read
  std::uint64_t buf_offset = 0;
  for (;;) {
    const std::size_t have = buf.size();
    const std::uint64_t left = limit - std::min(limit, buf_offset + have);
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, left));
    buf.resize(have + want);
    ssize_t n = 0;
    if (want) {
      do n = ::read(fd, buf.data() + have, want);
      while (n < 0 && errno == EINTR);
    }
    if (n < 0) return false;
    buf.resize(have + static_cast<std::size_t>(n));
    if (n == 0) break;
    std::string_view text(buf);
    std::size_t start = 0;
    for (std::size_t nl; (nl = text.find('\n', start)) != std::string_view::npos; start = nl + 1)
      on_line(text.substr(start, nl - start), buf_offset + start, true);
    buf.erase(0, start);  // keep the partial last line
    buf_offset += start;
  }
  if (!buf.empty()) on_line(buf, buf_offset, false);
  if (size) *size = buf_offset + buf.size();
  return true;
}

LoadedSession load_text(std::string_view id, std::string_view text) {
  Loader loader(id, {.conversation = false});
  each_line(text, [&](std::string_view line, std::uint64_t, bool complete) { loader.line(line, complete); });
  return loader.finish();
}

}  // namespace runtime::sessions::detail
