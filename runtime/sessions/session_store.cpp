// The session store: files, loading (with compaction and repairs), listing, the writer.
#include "runtime/sessions/session_store.hpp"
#include "support/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <spdlog/spdlog.h>
#include <system_error>
#include <tuple>

namespace runtime::sessions {

namespace json = boost::json;

namespace {

constexpr std::string_view kLogExt = ".jsonl";
constexpr std::string_view kMetaExt = ".meta.json";
constexpr const char* kInterruptedResult =
    "The tool call did not finish: the agent stopped before its result was recorded.";

[[noreturn]] void throw_errno(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};


void write_all(int fd, std::string_view data, const fs::path& p) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("write " + p.string());
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

void fsync_dir(const fs::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() >= 0) ::fsync(fd.get());
}

std::string normal_cwd(std::string_view cwd) {
  std::string s = fs::path(cwd).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// `log`: false for the summary scans of open() and list(), which stay quiet (load reports the
// same lines when the session is opened).
void warn(LoadedSession& s, std::string msg, bool log = true) {
  if (log) spdlog::warn("session {}: {}", s.id, msg);
  s.warnings.push_back(std::move(msg));
}

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

struct LoadOptions {
  bool conversation = true;  // build the conversation and the replay (false: only the summary)
};

LoadedSession load_text(std::string_view id, std::string_view text, LoadOptions opt = {}) {
  LoadedSession s;
  auto note = [&](std::string msg) { warn(s, std::move(msg), opt.conversation); };
  s.id = std::string(id);
  bool have_header = false;
  bool title_explicit = false;
  std::map<std::string, std::size_t> tool_index;  // toolCallId -> index in s.replay
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
            s.created_at = rec.time;
          } else if constexpr (std::is_same_v<T, UserMessage>) {
            s.interrupted = true;
            if (!title_explicit && s.title.empty()) s.title = user_title(r);
            if (!opt.conversation) return;
            if (!r.prompt.empty()) {
              for (auto& b : r.prompt)
                if (b.is_object()) s.replay.push_back(UserContent{json::object(b.get_object(), json::storage_ptr())});
            } else {
              if (!r.message.text.empty())
                s.replay.push_back(UserContent{json::object{{"type", "text"}, {"text", r.message.text}}});
              for (const auto& img : r.message.images)
                s.replay.push_back(UserContent{
                    json::object{{"type", "image"}, {"mimeType", img.mime_type}, {"data", img.data_base64}}});
            }
            s.conversation.push_back(std::move(r.message));
          } else if constexpr (std::is_same_v<T, AssistantMessage>) {
            if (!opt.conversation) return;
            if (!r.message.reasoning.empty())
              s.replay.push_back(ThoughtDelta{r.message.reasoning});
            if (!r.message.text.empty()) s.replay.push_back(TextDelta{r.message.text});
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
          } else if constexpr (std::is_same_v<T, TitleChange>) {
            s.title = std::move(r.title);
            title_explicit = true;
          } else if constexpr (std::is_same_v<T, UsageRecord>) {
            s.usage_total.input_tokens += r.usage.input_tokens;
            s.usage_total.output_tokens += r.usage.output_tokens;
            s.last_usage = r.usage;
          } else if constexpr (std::is_same_v<T, Compaction>) {
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
            s.replay.push_back(Notice{kCompactionNotice});
          } else if constexpr (std::is_same_v<T, TurnEnd>) {
            ++s.turns;
            s.last_stop_reason = std::move(r.stop_reason);
            s.interrupted = false;
          } else if constexpr (std::is_same_v<T, PlanUpdate>) {
            if (!opt.conversation) return;
            s.replay.push_back(PlanShown{std::move(r.entries)});
          }
        },
        rec.body);
  }
  if (!have_header) note("no header record: cwd, agent and mode are unknown");
  if (opt.conversation) {
    repair_tool_results(s);
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

// ---- Cursors: hex of "v1\n<updated ms>\n<id>" ----

std::string encode_cursor(std::int64_t updated_ms, const std::string& id) {
  static const char* hex = "0123456789abcdef";
  const std::string raw = "v1\n" + std::to_string(updated_ms) + "\n" + id;
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out.push_back(hex[c >> 4]);
    out.push_back(hex[c & 15]);
  }
  return out;
}

std::pair<std::int64_t, std::string> decode_cursor(std::string_view c) {
  auto nib = [](char x) -> int {
    if (x >= '0' && x <= '9') return x - '0';
    if (x >= 'a' && x <= 'f') return x - 'a' + 10;
    return -1;
  };
  if (c.empty() || c.size() % 2 || c.size() > 600) throw InvalidCursor("invalid cursor");
  std::string raw;
  for (std::size_t i = 0; i < c.size(); i += 2) {
    const int hi = nib(c[i]), lo = nib(c[i + 1]);
    if (hi < 0 || lo < 0) throw InvalidCursor("invalid cursor");
    raw.push_back(static_cast<char>(hi << 4 | lo));
  }
  if (raw.rfind("v1\n", 0) != 0) throw InvalidCursor("invalid cursor");
  const std::size_t nl = raw.find('\n', 3);
  if (nl == std::string::npos) throw InvalidCursor("invalid cursor");
  const std::string num = raw.substr(3, nl - 3);
  std::string id = raw.substr(nl + 1);
  if (num.empty() || num.size() > 19 || num.find_first_not_of("0123456789") != std::string::npos ||
      !valid_session_id(id))
    throw InvalidCursor("invalid cursor");
  return {std::stoll(num), std::move(id)};
}

// Newest first, ties by id.
bool list_before(std::int64_t a_ms, const std::string& a_id, std::int64_t b_ms, const std::string& b_id) {
  return std::tie(b_ms, a_id) < std::tie(a_ms, b_id);
}

}  // namespace

bool valid_session_id(std::string_view id) {
  if (id.empty() || id.size() > 128 || id.front() == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

// ---- SessionStore ----

SessionStore::SessionStore(fs::path root) : root_(std::move(root)) {}

fs::path SessionStore::file_of(std::string_view id) const { return root_ / (std::string(id) + std::string(kLogExt)); }
fs::path SessionStore::meta_of(std::string_view id) const { return root_ / (std::string(id) + std::string(kMetaExt)); }

bool SessionStore::exists(std::string_view id) const {
  std::error_code ec;
  return valid_session_id(id) && fs::is_regular_file(file_of(id), ec);
}

SessionWriter SessionStore::create(const Header& header) {
  if (!valid_session_id(header.id)) throw std::invalid_argument("invalid session id \"" + header.id + "\"");
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) {
    fs::create_directories(root_);
    fs::permissions(root_, fs::perms::owner_all, ec);
  }
  const fs::path file = file_of(header.id);
  Fd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600));
  if (fd.get() < 0) throw_errno("create " + file.string());
  SessionWriter w(file, meta_of(header.id), header.id);
  w.fd_ = fd.release();
  w.append(Record{header, {}});
  w.turn_boundary();
  fsync_dir(root_);
  return w;
}

SessionWriter SessionStore::open(std::string_view id) {
  if (!valid_session_id(id)) throw std::invalid_argument("invalid session id \"" + std::string(id) + "\"");
  const fs::path file = file_of(id);
  Fd fd(::open(file.c_str(), O_RDWR | O_APPEND | O_CLOEXEC));
  if (fd.get() < 0) throw_errno("open " + file.string());
  const std::optional<std::string> text = support::read_file(file);
  if (!text) throw_errno("read " + file.string());
  SessionWriter w(file, meta_of(id), std::string(id));
  LoadedSession s = load_text(id, *text, {.conversation = false});
  w.cwd_ = s.cwd;
  w.title_ = s.title;
  w.created_at_ = s.created_at;
  w.updated_at_ = s.updated_at;
  // title_explicit_ only matters while the title is empty (the first user message sets it).
  w.title_explicit_ = !s.title.empty();
  w.fd_ = fd.release();
  if (!text->empty() && text->back() != '\n') {
    std::lock_guard lock(*w.mu_);
    w.write_line_locked("\n");
  }
  return w;
}

std::optional<LoadedSession> SessionStore::load(std::string_view id) const {
  if (!valid_session_id(id)) return std::nullopt;
  const std::optional<std::string> text = support::read_file(file_of(id));
  if (!text) return std::nullopt;
  return load_text(id, *text);
}

ListPage SessionStore::list(const std::optional<std::string>& cwd, const std::optional<std::string>& cursor,
                            std::size_t page_size) const {
  std::optional<std::pair<std::int64_t, std::string>> after;
  if (cursor) after = decode_cursor(*cursor);
  const std::optional<std::string> want = cwd ? std::optional(normal_cwd(*cwd)) : std::nullopt;

  std::vector<SessionSummary> all;
  std::error_code ec;
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= kLogExt.size() || name.compare(name.size() - kLogExt.size(), kLogExt.size(), kLogExt) != 0)
      continue;
    const std::string id = name.substr(0, name.size() - kLogExt.size());
    if (!valid_session_id(id)) continue;
    struct stat st {};
    if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;

    SessionSummary sum;
    sum.id = id;
    bool fresh = false;
    if (auto meta = support::read_file(meta_of(id))) {
      boost::system::error_code jec;
      json::value v = json::parse(*meta, jec);
      if (!jec && v.is_object()) {
        const auto& o = v.get_object();
        const json::value* size = o.if_contains("size");
        const json::value* c = o.if_contains("cwd");
        const json::value* t = o.if_contains("title");
        const json::value* u = o.if_contains("updatedAt");
        if (size && size->is_int64() && size->get_int64() == st.st_size && c && c->is_string() && t &&
            t->is_string() && u && u->is_string()) {
          sum.cwd = std::string(c->get_string());
          sum.title = std::string(t->get_string());
          sum.updated_at = std::string(u->get_string());
          fresh = true;
        }
      }
    }
    if (!fresh) {  // no sidecar, or the log grew after it (a turn cut short): read the log
      const std::optional<std::string> text = support::read_file(it->path());
      if (!text) continue;
      LoadedSession s = load_text(id, *text, {.conversation = false});
      sum.cwd = std::move(s.cwd);
      sum.title = std::move(s.title);
      sum.updated_at = std::move(s.updated_at);
    }
    if (sum.cwd.empty()) continue;  // no header: SessionInfo needs a cwd
    sum.updated_ms = parse_iso8601(sum.updated_at).value_or(static_cast<std::int64_t>(st.st_mtime) * 1000);
    if (sum.updated_at.empty()) sum.updated_at = iso8601(sum.updated_ms);
    if (want && normal_cwd(sum.cwd) != *want) continue;
    all.push_back(std::move(sum));
  }

  std::sort(all.begin(), all.end(),
            [](const SessionSummary& a, const SessionSummary& b) { return list_before(a.updated_ms, a.id, b.updated_ms, b.id); });
  auto first = all.begin();
  if (after) {
    first = std::find_if(all.begin(), all.end(), [&](const SessionSummary& s) {
      return list_before(after->first, after->second, s.updated_ms, s.id);
    });
  }
  ListPage page;
  const std::size_t remaining = static_cast<std::size_t>(all.end() - first);
  const std::size_t n = page_size == 0 ? remaining : std::min(page_size, remaining);
  page.sessions.assign(std::make_move_iterator(first), std::make_move_iterator(first + static_cast<std::ptrdiff_t>(n)));
  if (n < remaining && !page.sessions.empty())
    page.next_cursor = encode_cursor(page.sessions.back().updated_ms, page.sessions.back().id);
  return page;
}

bool SessionStore::remove(std::string_view id) {
  if (!valid_session_id(id)) return false;
  std::error_code ec1, ec2;
  const bool a = fs::remove(file_of(id), ec1);
  const bool b = fs::remove(meta_of(id), ec2);
  return a || b;
}

// ---- SessionWriter ----

SessionWriter::SessionWriter(fs::path file, fs::path meta, std::string id)
    : mu_(std::make_unique<std::mutex>()), file_(std::move(file)), meta_(std::move(meta)), id_(std::move(id)) {}

SessionWriter::SessionWriter(SessionWriter&& o) noexcept
    : mu_(std::move(o.mu_)),
      fd_(std::exchange(o.fd_, -1)),
      file_(std::move(o.file_)),
      meta_(std::move(o.meta_)),
      id_(std::move(o.id_)),
      cwd_(std::move(o.cwd_)),
      title_(std::move(o.title_)),
      created_at_(std::move(o.created_at_)),
      updated_at_(std::move(o.updated_at_)),
      title_explicit_(o.title_explicit_) {}

SessionWriter& SessionWriter::operator=(SessionWriter&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    mu_ = std::move(o.mu_);
    fd_ = std::exchange(o.fd_, -1);
    file_ = std::move(o.file_);
    meta_ = std::move(o.meta_);
    id_ = std::move(o.id_);
    cwd_ = std::move(o.cwd_);
    title_ = std::move(o.title_);
    created_at_ = std::move(o.created_at_);
    updated_at_ = std::move(o.updated_at_);
    title_explicit_ = o.title_explicit_;
  }
  return *this;
}

SessionWriter::~SessionWriter() {
  if (fd_ >= 0) ::close(fd_);
}

std::string SessionWriter::title() const {
  std::lock_guard lock(*mu_);
  return title_;
}

std::string SessionWriter::updated_at() const {
  std::lock_guard lock(*mu_);
  return updated_at_;
}

void SessionWriter::write_line_locked(const std::string& line) {
  if (fd_ < 0) throw std::system_error(EBADF, std::generic_category(), "session writer is closed");
  write_all(fd_, line, file_);
}

void SessionWriter::append(Record record) {
  if (record.time.empty()) record.time = iso8601(now_ms());
  std::string line = json::serialize(to_json(record));
  line.push_back('\n');
  std::lock_guard lock(*mu_);
  write_line_locked(line);
  updated_at_ = record.time;
  if (const auto* h = std::get_if<Header>(&record.body)) {
    cwd_ = h->cwd;
    created_at_ = record.time;
  } else if (const auto* u = std::get_if<UserMessage>(&record.body)) {
    if (!title_explicit_ && title_.empty()) title_ = user_title(*u);
  } else if (const auto* t = std::get_if<TitleChange>(&record.body)) {
    title_ = t->title;
    title_explicit_ = true;
  }
}

void SessionWriter::turn_boundary() {
  std::lock_guard lock(*mu_);
  if (fd_ < 0) throw std::system_error(EBADF, std::generic_category(), "session writer is closed");
  if (::fsync(fd_) != 0) throw_errno("fsync " + file_.string());
  write_meta_locked();
}

void SessionWriter::write_meta_locked() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw_errno("stat " + file_.string());
  const json::object meta{{"v", 1},
                          {"id", id_},
                          {"cwd", cwd_},
                          {"title", title_},
                          {"createdAt", created_at_},
                          {"updatedAt", updated_at_},
                          {"size", static_cast<std::int64_t>(st.st_size)}};
  const std::string text = json::serialize(meta) + "\n";
  const fs::path tmp = meta_.string() + ".tmp" + std::to_string(::getpid());
  {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (fd.get() < 0) throw_errno("create " + tmp.string());
    write_all(fd.get(), text, tmp);
  }
  if (::rename(tmp.c_str(), meta_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::system_error(err, std::generic_category(), "rename " + tmp.string());
  }
}

}  // namespace runtime::sessions
