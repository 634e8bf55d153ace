// The writer of one session's log: appends a record a line, fsyncs at turn boundaries and keeps
// the sidecar index (title, cwd, times, size) for `list`.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "runtime/config/secrets.hpp"
#include "runtime/sessions/detail.hpp"
#include "support/file_io.hpp"
#include "support/text.hpp"

namespace runtime::sessions {

namespace json = boost::json;
using detail::throw_errno;

namespace {

// Writes all of `data`; on failure throws, with `written` telling how much of it reached the file.
void write_all(int fd, std::string_view data, const fs::path& p, std::size_t& written) {
  written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("write " + p.string());
    }
    written += static_cast<std::size_t>(n);
  }
}

}  // namespace

SessionWriter::SessionWriter(fs::path file, fs::path meta, std::string id)
    : mu_(std::make_unique<std::mutex>()), file_(std::move(file)), meta_(std::move(meta)), id_(std::move(id)) {}

SessionWriter::SessionWriter(SessionWriter&& o) noexcept
    : mu_(std::move(o.mu_)),
      fd_(std::exchange(o.fd_, -1)),
      file_(std::move(o.file_)),
      meta_(std::move(o.meta_)),
      id_(std::move(o.id_)),
      cwd_(std::move(o.cwd_)),
      parent_(std::move(o.parent_)),
      title_(std::move(o.title_)),
      created_at_(std::move(o.created_at_)),
      updated_at_(std::move(o.updated_at_)),
      title_explicit_(o.title_explicit_),
      archived_(o.archived_),
      torn_(o.torn_),
      deleted_(o.deleted_),
      entry_synced_(o.entry_synced_) {}

SessionWriter& SessionWriter::operator=(SessionWriter&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    mu_ = std::move(o.mu_);
    fd_ = std::exchange(o.fd_, -1);
    file_ = std::move(o.file_);
    meta_ = std::move(o.meta_);
    id_ = std::move(o.id_);
    cwd_ = std::move(o.cwd_);
    parent_ = std::move(o.parent_);
    title_ = std::move(o.title_);
    created_at_ = std::move(o.created_at_);
    updated_at_ = std::move(o.updated_at_);
    title_explicit_ = o.title_explicit_;
    archived_ = o.archived_;
    torn_ = o.torn_;
    deleted_ = o.deleted_;
    entry_synced_ = o.entry_synced_;
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

bool SessionWriter::archived() const {
  std::lock_guard lock(*mu_);
  return archived_;
}

std::uint64_t SessionWriter::size() const {
  std::lock_guard lock(*mu_);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) throw_errno("stat " + file_.string());
  return static_cast<std::uint64_t>(st.st_size);
}

void SessionWriter::write_line_locked(const std::string& line) {
  if (fd_ < 0) throw std::system_error(EBADF, std::generic_category(), "session writer is closed");
  std::size_t written = 0;
  if (torn_) {  // end the half line first, so this record is a line of its own
    write_all(fd_, "\n", file_, written);
    torn_ = false;
  }
  try {
    write_all(fd_, line, file_, written);
  } catch (const std::system_error&) {
    // Disk full in the middle of a record: cut the part that was written, or the next record
    // would be glued to it and both lost on load. The file is O_APPEND, so what we wrote is
    // its last `written` bytes (no fstat before every write: this is on every tool call's path).
    struct stat st {};
    if (written > 0 && (::fstat(fd_, &st) != 0 || st.st_size < static_cast<off_t>(written) ||
                        ::ftruncate(fd_, st.st_size - static_cast<off_t>(written)) != 0))
      torn_ = true;
    throw;
  }
}

namespace {
// A record as its journal line, newline included.
std::string journal_line(Record& record) {
  if (record.time.empty()) record.time = iso8601(now_ms());
  // A key value never reaches the journal, whatever printed it (a command's output, an error).
  std::string line = config::redact_secrets(json::serialize(to_json(record)));
  support::repair_utf8(line);  // a journal line that is not UTF-8 could not be loaded again
  line.push_back('\n');
  return line;
}
}  // namespace

void SessionWriter::append(Record record) {
  const std::string line = journal_line(record);
  std::lock_guard lock(*mu_);
  write_line_locked(line);
  note_locked(record);
}

void SessionWriter::append_all(std::vector<RecordBody> bodies) {
  std::vector<Record> records;
  records.reserve(bodies.size());
  std::string lines;
  const std::string time = iso8601(now_ms());
  for (auto& body : bodies) {
    records.push_back(Record{std::move(body), time});
    lines += journal_line(records.back());
  }
  std::lock_guard lock(*mu_);
  write_line_locked(lines);
  for (const auto& r : records) note_locked(r);
}

void SessionWriter::note_locked(const Record& record) {
  updated_at_ = record.time;
  if (const auto* h = std::get_if<Header>(&record.body)) {
    cwd_ = h->cwd;
    parent_ = h->parent;
    created_at_ = record.time;
  } else if (const auto* u = std::get_if<UserMessage>(&record.body)) {
    if (!title_explicit_ && title_.empty()) title_ = detail::user_title(*u);
  } else if (const auto* t = std::get_if<TitleChange>(&record.body)) {
    title_ = t->title;
    title_explicit_ = true;
  } else if (const auto* a = std::get_if<ArchiveChange>(&record.body)) {
    archived_ = a->archived;
  }
}

void SessionWriter::turn_boundary() {
  std::lock_guard lock(*mu_);
  if (fd_ < 0) throw std::system_error(EBADF, std::generic_category(), "session writer is closed");
  if (::fsync(fd_) != 0) throw_errno("fsync " + file_.string());
  write_meta_locked();
  if (!entry_synced_) {  // the first turn end of a new session: its folder entries too
    detail::fsync_dir(file_.parent_path());
    entry_synced_ = true;
  }
}

void SessionWriter::mark_deleted() {
  std::lock_guard lock(*mu_);
  deleted_ = true;
}

void SessionWriter::write_meta_locked(bool sync) {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw_errno("stat " + file_.string());
  if (deleted_ || st.st_nlink == 0) return;  // a sidecar with no log would be an orphan
  json::object meta{{"v", 1},
                    {"id", id_},
                    {"cwd", cwd_},
                    {"title", title_},
                    {"createdAt", created_at_},
                    {"updatedAt", updated_at_},
                    {"size", static_cast<std::int64_t>(st.st_size)}};
  if (!parent_.empty()) meta["parent"] = parent_;
  if (archived_) meta["archived"] = true;
  // Through the one atomic writer: `list` never reads half a sidecar.
  const std::string text = json::serialize(meta) + "\n";
  if (sync) support::write_file_atomically(meta_, text, 0600);
  else support::write_file_atomically_unsynced(meta_, text, 0600);
}

}  // namespace runtime::sessions
