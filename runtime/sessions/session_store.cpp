// The session store: the files of a root folder, creating and opening a session's log, loading
// it, listing sessions (from the sidecars, with cursors) and removing them.
#include "runtime/sessions/session_store.hpp"
#include "runtime/config/paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <tuple>
#include <unordered_map>

#include "runtime/sessions/detail.hpp"
#include "support/file_io.hpp"

namespace runtime::sessions {

namespace json = boost::json;
using detail::load_text;
using detail::throw_errno;

namespace {

constexpr std::string_view kLogExt = ".jsonl";
constexpr std::string_view kMetaExt = ".meta.json";

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

std::string normal_cwd(std::string_view cwd) {
  std::string s = fs::path(cwd).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
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

namespace detail {

void throw_errno(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

void fsync_dir(const fs::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() >= 0) ::fsync(fd.get());
}

}  // namespace detail

bool valid_session_id(std::string_view id) {
  if (id.empty() || id.size() > 128 || id.front() == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

// ---- SessionStore ----

SessionStore::SessionStore(fs::path root) : root_(std::move(root)), index_(std::make_unique<ListIndex>()) {}
SessionStore::~SessionStore() = default;

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
    config::create_private_directories(root_, ec);
    if (ec) throw std::system_error(ec, "create " + root_.string());
  }
  const fs::path file = file_of(header.id);
  Fd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600));
  if (fd.get() < 0) throw_errno("create " + file.string());
  SessionWriter w(file, meta_of(header.id), header.id);
  w.fd_ = fd.release();
  // No fsync here: it cost session/new ~5 ms (three on this VM). A session with no turn yet has
  // nothing of the user's to lose; its first turn end makes the log, sidecar and entry durable.
  w.append(Record{header, {}});
  {
    std::lock_guard lock(*w.mu_);
    w.write_meta_locked(false);
  }
  w.entry_synced_ = false;
  return w;
}

SessionWriter SessionStore::open(std::string_view id) {
  if (!valid_session_id(id)) throw std::invalid_argument("invalid session id \"" + std::string(id) + "\"");
  const fs::path file = file_of(id);
  const std::optional<std::string> text = support::read_file(file);
  if (!text) throw_errno("open " + file.string());
  return open(load_text(id, *text));
}

SessionWriter SessionStore::open(const LoadedSession& loaded) {
  const std::string& id = loaded.id;
  if (!valid_session_id(id)) throw std::invalid_argument("invalid session id \"" + id + "\"");
  const fs::path file = file_of(id);
  Fd fd(::open(file.c_str(), O_RDWR | O_APPEND | O_CLOEXEC));
  if (fd.get() < 0) throw_errno("open " + file.string());
  SessionWriter w(file, meta_of(id), id);
  w.cwd_ = loaded.cwd;
  w.parent_ = loaded.parent;
  w.title_ = loaded.title;
  w.created_at_ = loaded.created_at;
  w.updated_at_ = loaded.updated_at;
  w.archived_ = loaded.archived;
  // title_explicit_ only matters while the title is empty (the first user message sets it).
  w.title_explicit_ = !loaded.title.empty();
  // Whether the log ends in a half-written line: its last byte, now.
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno("stat " + file.string());
  char last = '\n';
  if (st.st_size > 0 && ::pread(fd.get(), &last, 1, st.st_size - 1) != 1) throw_errno("read " + file.string());
  w.fd_ = fd.release();
  if (last != '\n') {
    std::lock_guard lock(*w.mu_);
    w.write_line_locked("\n");
  }
  return w;
}

namespace {
// The first `limit` bytes of a log, read in chunks (never the whole log at once) into a loader;
// `fd` stays open for the caller.
std::optional<LoadedSession> read_log(int fd, std::string_view id, detail::LoadOptions opt,
                                      std::uint64_t limit = std::numeric_limits<std::uint64_t>::max()) {
  // The conversation leaves out what rewinds dropped (the summary counts every record).
  if (opt.conversation) opt.dropped = rewound_spans(fd, limit);
  detail::Loader loader(id, opt);
  std::uint64_t size = 0;
  const bool read = detail::each_line_of_fd(
      fd, [&](std::string_view line, std::uint64_t offset, bool complete) { loader.line(line, complete, offset); }, &size,
      256 * 1024, limit);
  if (!read) return std::nullopt;
  LoadedSession s = loader.finish();
  s.log_bytes = size;
  return s;
}
}  // namespace

std::optional<LoadedSession> SessionStore::load(std::string_view id) const {
  if (!valid_session_id(id)) return std::nullopt;
  Fd fd(::open(file_of(id).c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  auto s = read_log(fd.get(), id, {.conversation = true});
  // Only the conversation stays in memory; the replay reads the log again as it sends it.
  if (s) s->replay = std::make_shared<Replay>(std::string(id), fd.release(), Replay::Form::Decoded);
  return s;
}

std::optional<LoadedSession> SessionStore::load_summary(std::string_view id) const {
  if (!valid_session_id(id)) return std::nullopt;
  Fd fd(::open(file_of(id).c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  return read_log(fd.get(), id, {.conversation = false});
}

std::optional<std::vector<Message>> SessionStore::load_conversation(const LoadedSession& summary) const {
  const std::string& id = summary.id;
  if (!valid_session_id(id)) return std::nullopt;
  Fd fd(::open(file_of(id).c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  auto s = read_log(fd.get(), id, {.conversation = true, .messages = summary.messages}, summary.log_bytes);
  if (!s) return std::nullopt;
  return std::move(s->conversation);
}

std::shared_ptr<Replay> SessionStore::open_replay(std::string_view id, Replay::Form form) const {
  if (!valid_session_id(id)) return nullptr;
  const int fd = ::open(file_of(id).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  return std::make_shared<Replay>(std::string(id), fd, form);
}

namespace {

// What the listing knows of a log file: when any of it changes, the session is read again.
struct FileStamp {
  std::int64_t size = -1;
  std::int64_t mtime_ns = 0;
  ino_t inode = 0;
  bool operator==(const FileStamp&) const = default;
};

FileStamp stamp_of(const struct stat& st) {
  return {st.st_size, static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec, st.st_ino};
}

// The summary of session `id` whose log is `log`: from its sidecar when that is current, else
// from the log itself (no sidecar, or the log grew after it: a turn cut short). nullopt when the
// log cannot be read.
std::optional<SessionSummary> read_summary(const std::string& id, const fs::path& log, const fs::path& meta,
                                           const struct stat& st) {
  SessionSummary sum;
  sum.id = id;
  bool fresh = false;
  if (auto text = support::read_file(meta)) {
    boost::system::error_code jec;
    json::value v = json::parse(*text, jec);
    if (!jec && v.is_object()) {
      const auto& o = v.get_object();
      const json::value* size = o.if_contains("size");
      const json::value* c = o.if_contains("cwd");
      const json::value* t = o.if_contains("title");
      const json::value* u = o.if_contains("updatedAt");
      const json::value* parent = o.if_contains("parent");
      sum.parent = parent && parent->is_string() && !parent->get_string().empty();
      const json::value* arch = o.if_contains("archived");
      sum.archived = arch && arch->is_bool() && arch->get_bool();
      if (size && size->is_int64() && size->get_int64() == st.st_size && c && c->is_string() && t &&
          t->is_string() && u && u->is_string()) {
        sum.cwd = std::string(c->get_string());
        sum.title = std::string(t->get_string());
        sum.updated_at = std::string(u->get_string());
        fresh = true;
      }
    }
  }
  if (!fresh) {
    const std::optional<std::string> text = support::read_file(log);
    if (!text) return std::nullopt;
    LoadedSession s = load_text(id, *text);
    sum.cwd = std::move(s.cwd);
    sum.title = std::move(s.title);
    sum.updated_at = std::move(s.updated_at);
    sum.parent = !s.parent.empty();
    sum.archived = s.archived;
  }
  sum.updated_ms = parse_iso8601(sum.updated_at).value_or(static_cast<std::int64_t>(st.st_mtime) * 1000);
  if (sum.updated_at.empty()) sum.updated_at = iso8601(sum.updated_ms);
  return sum;
}

}  // namespace

// The listing's index: a summary per session, so that a page costs what it returns (10,001
// sessions took 77.5 s for all 201 pages when every page read every sidecar). The first page (no
// cursor) brings it up to date with the folder, a stat per log and a read only of the sessions
// whose log changed (other processes' sessions included; a title, an archive or a turn changes
// the log); the pages after it read the index as the first page left it, less the sessions
// removed since.
struct SessionStore::ListIndex {
  struct Entry {
    FileStamp stamp;
    std::uint64_t seen = 0;  // the refresh that last found the log
    SessionSummary summary;
    bool listed = false;  // false: no header (SessionInfo needs a cwd) or a sub-agent's session
    std::string cwd_key;  // normal_cwd(summary.cwd), for the cwd filter
  };
  std::mutex mu;
  bool built = false;
  std::uint64_t refreshes = 0;
  std::unordered_map<std::string, Entry> entries;
  std::vector<const Entry*> order;  // the listed entries, newest first (ties: by id)

  void refresh(const SessionStore& store) {
    const std::uint64_t now = ++refreshes;
    bool changed = !built;
    std::error_code ec;
    for (fs::directory_iterator it(store.root(), ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.size() <= kLogExt.size() || name.compare(name.size() - kLogExt.size(), kLogExt.size(), kLogExt) != 0)
        continue;
      const std::string id = name.substr(0, name.size() - kLogExt.size());
      if (!valid_session_id(id)) continue;
      struct stat st {};
      if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      auto found = entries.find(id);
      if (found != entries.end() && found->second.stamp == stamp_of(st)) {
        found->second.seen = now;
        continue;
      }
      changed = true;
      auto sum = read_summary(id, it->path(), store.meta_of(id), st);
      if (!sum) {  // unreadable now: not listed, tried again next time
        if (found != entries.end()) entries.erase(found);
        continue;
      }
      Entry& e = entries[id];
      e = Entry{stamp_of(st), now, std::move(*sum), false, {}};
      e.listed = !e.summary.cwd.empty() && !e.summary.parent;
      e.cwd_key = normal_cwd(e.summary.cwd);
    }
    changed |= std::erase_if(entries, [now](const auto& kv) { return kv.second.seen != now; }) > 0;
    built = true;
    if (changed) sort();
  }

  void sort() {
    order.clear();
    for (const auto& [_, e] : entries)
      if (e.listed) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
      return list_before(a->summary.updated_ms, a->summary.id, b->summary.updated_ms, b->summary.id);
    });
  }

  void forget(std::string_view id) {
    auto found = entries.find(std::string(id));
    if (found == entries.end()) return;
    std::erase(order, &found->second);
    entries.erase(found);
  }

  ListPage page(const std::optional<std::pair<std::int64_t, std::string>>& after, const std::optional<std::string>& want,
                std::size_t page_size, ArchiveFilter archived) const {
    auto it = order.begin();
    if (after) {
      it = std::partition_point(order.begin(), order.end(), [&](const Entry* e) {
        return !list_before(after->first, after->second, e->summary.updated_ms, e->summary.id);
      });
    }
    ListPage page;
    const std::size_t n = page_size == 0 ? static_cast<std::size_t>(-1) : page_size;
    for (; it != order.end(); ++it) {
      const Entry& e = **it;
      if (want && e.cwd_key != *want) continue;
      if ((archived == ArchiveFilter::Exclude && e.summary.archived) || (archived == ArchiveFilter::Only && !e.summary.archived))
        continue;
      if (page.sessions.size() == n) {  // one more after the page: it gets a cursor
        page.next_cursor = encode_cursor(page.sessions.back().updated_ms, page.sessions.back().id);
        break;
      }
      page.sessions.push_back(e.summary);
    }
    return page;
  }
};

ListPage SessionStore::list(const std::optional<std::string>& cwd, const std::optional<std::string>& cursor,
                            std::size_t page_size, ArchiveFilter archived) const {
  std::optional<std::pair<std::int64_t, std::string>> after;
  if (cursor) after = decode_cursor(*cursor);
  const std::optional<std::string> want = cwd ? std::optional(normal_cwd(*cwd)) : std::nullopt;
  std::lock_guard lock(index_->mu);
  if (!after || !index_->built) index_->refresh(*this);
  return index_->page(after, want, page_size, archived);
}

bool SessionStore::fork(std::string_view source, Header header, std::optional<std::uint64_t> limit,
                        const std::vector<RecordBody>& tail) {
  if (!valid_session_id(source)) return false;
  const std::optional<std::string> text = support::read_file(file_of(source));
  if (!text) return false;
  std::string_view records(*text);
  if (limit && *limit < records.size()) records = records.substr(0, *limit);
  records = records.substr(0, records.rfind('\n') + 1);  // whole lines only (none: npos + 1 = 0)
  // The writer puts the header first: it is replaced, the rest is copied as written.
  const std::size_t first_end = records.find('\n') + 1;
  LoadedSession first = load_text(source, records.substr(0, first_end));
  if (!first.cwd.empty()) {
    header.agent = first.agent;
    header.mode = first.mode;
    records.remove_prefix(first_end);
  }
  SessionWriter w = create(header);
  bool source_archived = false;
  {
    std::lock_guard lock(*w.mu_);
    if (!records.empty()) w.write_line_locked(std::string(records));
    // The title and times the sidecar shows: the copied records', and this session's creation.
    LoadedSession copied = load_text(header.id, records);
    w.title_ = copied.title;
    w.title_explicit_ = !copied.title.empty();
    source_archived = copied.archived;
  }
  // Titled as a fork until it gets a title of its own: the session list tells the two apart.
  if (!w.title_.empty()) w.append(TitleChange{w.title_ + " (fork)"});
  if (source_archived) w.append(ArchiveChange{false});  // a fork of an archived session is new work, listed
  for (const auto& r : tail) w.append(r);
  w.turn_boundary();
  return true;
}

bool SessionStore::remove(std::string_view id) {
  if (!valid_session_id(id)) return false;
  std::error_code ec1, ec2;
  const bool a = fs::remove(file_of(id), ec1);
  const bool b = fs::remove(meta_of(id), ec2);
  fs::remove_all(root_ / (std::string(id) + ".checkpoints"), ec2);
  {
    std::lock_guard lock(index_->mu);
    index_->forget(id);
  }
  return a || b;
}

}  // namespace runtime::sessions
