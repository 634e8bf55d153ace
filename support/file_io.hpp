#pragma once
// Whole-file reads and crash-safe writes, one of each for the whole program.
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace support {

// strerror(err) as a string.
std::string errno_text(int err);

// The whole file; nullopt when it cannot be opened or read.
std::optional<std::string> read_file(const std::filesystem::path& path);

// Why read_file_window could not read: the file is missing, unreadable, or not a regular file
// ("a FIFO, not a regular file"). The message names no path; the caller adds it.
struct FileReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The part of a file a reader wants: lines [first_line, first_line + max_lines), at most
// max_bytes of them.
struct LineWindow {
  std::int64_t first_line = 1;  // 1-based
  std::int64_t max_lines = std::numeric_limits<std::int64_t>::max();
  std::size_t max_bytes = std::numeric_limits<std::size_t>::max();
};

struct WindowRead {
  std::string text;             // the window's lines, as in the file
  bool cut = false;             // max_bytes ended it while the window wanted more of the file
  bool stopped = false;         // `stop` was set: text is what was read until then
  std::uint64_t bytes_read = 0;  // from the file: the lines before the window, text, and at most one chunk more
};

// The file's bytes are read in chunks of this size.
inline constexpr std::size_t kReadChunkBytes = 64 * 1024;

// Reads `window` of a regular file without loading the rest: it stops at the window's end, and
// checks `stop` (set from another thread: a cancel) before each chunk. Only regular files: the
// open never blocks (O_NONBLOCK, O_NOCTTY) and a FIFO, a device, a socket or a directory is
// refused, so `/dev/stdin` or a FIFO cannot hang the reading thread. Throws FileReadError.
WindowRead read_file_window(const std::filesystem::path& path, const LineWindow& window,
                            const std::atomic<bool>* stop = nullptr);
// The same window of text already in memory (a file read whole elsewhere).
WindowRead window_of_text(std::string_view text, const LineWindow& window);

// Replaces `path` with `content` so that a crash leaves the old or the new file, never half of
// one: a temp file beside it (mkstemp, so never readable by others), fchmod to `mode`, fsync,
// rename. A symlinked file (dotfile managers) is replaced at its target, keeping the link.
// Throws std::runtime_error naming the file and the failing step.
void write_file_atomically(const std::filesystem::path& path, const std::string& content, mode_t mode);
// As above without the fsync: readers still never see half a file, but a crash may lose it (for
// what is written again, durably, soon after).
void write_file_atomically_unsynced(const std::filesystem::path& path, const std::string& content, mode_t mode);

}  // namespace support
