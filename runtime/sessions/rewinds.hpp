#pragma once
// Rewinds in a session's log (_session/rewind, issue 36): a `rewind` record drops the user message
// it names and everything after it, up to the record itself, from what the model sees (Loader) and
// what session/load replays (Replay). Nothing is deleted from the file: each pass skips the spans.
//
// A log with no rewind costs one scan for the record's line start (memmem, no parsing); only a
// log that has some has its user lines parsed, to place each rewind's start.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runtime::sessions {

// Bytes [from, to) of the log a rewind dropped: from the start of the rewound user message's line
// to the start of the rewind record's line.
struct DroppedSpan {
  std::uint64_t from = 0;
  std::uint64_t to = 0;
};

// Whether the line starting at `offset` lies in one of `spans`.
bool dropped(const std::vector<DroppedSpan>& spans, std::uint64_t offset);

// The spans the rewind records of the first `limit` bytes of the log on `fd` drop (pread: the
// descriptor's position is not moved). Each rewind applies to the last user message with its id
// before it that an earlier rewind had not dropped; one naming no such message drops nothing.
std::vector<DroppedSpan> rewound_spans(int fd, std::uint64_t limit = std::numeric_limits<std::uint64_t>::max());

// The id session/load shows for the user message on line `line_no` (1-based) of a log: its own, or
// for a message journaled before message ids, one made from its line (the same on every load).
std::string shown_message_id(std::string_view own_id, std::uint32_t line_no);

// Whether the log on `fd` holds a user message `message_id` that no rewind dropped: what the
// model still sees, and what a new rewind may name.
bool has_live_user_message(int fd, std::string_view message_id);

}  // namespace runtime::sessions
