// Rewinds in a session's log: where each one's dropped span starts and ends (rewinds.hpp).
#include "runtime/sessions/rewinds.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include "runtime/sessions/detail.hpp"

namespace runtime::sessions {

namespace {

constexpr std::string_view kRewindStart = R"({"type":"rewind")";
constexpr std::string_view kUserStart = R"({"type":"user")";
constexpr std::size_t kChunk = 256 * 1024;

// Calls `on_line(text, offset, line_no)` for each line of the first `limit` bytes of the file,
// from its start; the descriptor's position is put back at 0 (the loader reads it next). False
// when it cannot be read.
bool each_line_at(int fd, std::uint64_t limit,
                  const std::function<void(std::string_view, std::uint64_t, std::uint32_t)>& on_line) {
  std::uint32_t line_no = 0;
  if (::lseek(fd, 0, SEEK_SET) != 0) return false;
  const bool read = detail::each_line_of_fd(
      fd, [&](std::string_view line, std::uint64_t offset, bool) { on_line(line, offset, ++line_no); }, nullptr, kChunk,
      limit);
  return ::lseek(fd, 0, SEEK_SET) == 0 && read;
}

// Whether the first `limit` bytes hold a line starting a rewind record: a plain search, so that a
// log without rewinds (nearly all) is not parsed. The pattern cannot occur inside a JSON string
// (its quotes would be escaped there), only as a record's or a nested object's start.
bool has_rewind_record(int fd, std::uint64_t limit) {
  std::string buf;
  std::uint64_t offset = 0;
  char before = '\n';  // the byte before buf[0]
  for (;;) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, limit - std::min(limit, offset)));
    if (want == 0) return false;
    const std::size_t keep = std::min(buf.size(), kRewindStart.size());  // a match across chunks
    if (keep) before = buf.size() > keep ? buf[buf.size() - keep - 1] : before;
    buf.erase(0, buf.size() - keep);
    const std::size_t have = buf.size();
    buf.resize(have + want);
    ssize_t n;
    do n = ::pread(fd, buf.data() + have, want, static_cast<off_t>(offset));
    while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    buf.resize(have + static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
    for (std::size_t at = 0; (at = buf.find(kRewindStart, at)) != std::string::npos; ++at)
      if ((at == 0 ? before : buf[at - 1]) == '\n') return true;
  }
}

struct UserLine {
  std::uint64_t offset = 0;
  std::string id;  // as shown (shown_message_id)
};
struct RewindLine {
  std::uint64_t offset = 0;
  std::string message_id;
};

// The log's user messages and rewind records, in order (corrupt lines skipped: load reports them).
bool read_users_and_rewinds(int fd, std::uint64_t limit, std::vector<UserLine>& users, std::vector<RewindLine>& rewinds) {
  detail::LineParser parser;
  return each_line_at(fd, limit, [&](std::string_view line, std::uint64_t offset, std::uint32_t line_no) {
    const bool user = line.starts_with(kUserStart), rewind = line.starts_with(kRewindStart);
    if (!user && !rewind) return;
    try {
      Record rec = parser.parse(line);
      if (auto* u = std::get_if<UserMessage>(&rec.body)) users.push_back({offset, shown_message_id(u->message.id, line_no)});
      else if (auto* r = std::get_if<Rewind>(&rec.body)) rewinds.push_back({offset, std::move(r->message_id)});
    } catch (const std::invalid_argument&) {
    }
  });
}

// The last user message `id` before `before` that no span drops.
const UserLine* live_user(const std::vector<UserLine>& users, const std::vector<DroppedSpan>& spans, std::string_view id,
                          std::uint64_t before) {
  for (auto it = users.rbegin(); it != users.rend(); ++it)
    if (it->offset < before && it->id == id && !dropped(spans, it->offset)) return &*it;
  return nullptr;
}

std::vector<DroppedSpan> spans_of(const std::vector<UserLine>& users, const std::vector<RewindLine>& rewinds) {
  std::vector<DroppedSpan> spans;
  for (const auto& r : rewinds)
    if (const UserLine* u = live_user(users, spans, r.message_id, r.offset)) spans.push_back({u->offset, r.offset});
  return spans;
}

}  // namespace

bool dropped(const std::vector<DroppedSpan>& spans, std::uint64_t offset) {
  return std::any_of(spans.begin(), spans.end(), [offset](const DroppedSpan& s) { return offset >= s.from && offset < s.to; });
}

std::string shown_message_id(std::string_view own_id, std::uint32_t line_no) {
  return own_id.empty() ? "msg_line" + std::to_string(line_no) : std::string(own_id);
}

std::vector<DroppedSpan> rewound_spans(int fd, std::uint64_t limit) {
  if (!has_rewind_record(fd, limit)) return {};
  std::vector<UserLine> users;
  std::vector<RewindLine> rewinds;
  if (!read_users_and_rewinds(fd, limit, users, rewinds)) return {};
  return spans_of(users, rewinds);
}

bool has_live_user_message(int fd, std::string_view message_id) {
  std::vector<UserLine> users;
  std::vector<RewindLine> rewinds;
  const auto limit = std::numeric_limits<std::uint64_t>::max();
  if (!read_users_and_rewinds(fd, limit, users, rewinds)) return false;
  return live_user(users, spans_of(users, rewinds), message_id, limit) != nullptr;
}

}  // namespace runtime::sessions
