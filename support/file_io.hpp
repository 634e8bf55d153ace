#pragma once
// Whole-file reads and crash-safe writes, one of each for the whole program.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace support {

// strerror(err) as a string.
std::string errno_text(int err);

// The whole file; nullopt when it cannot be opened or read.
std::optional<std::string> read_file(const std::filesystem::path& path);

// Replaces `path` with `content` so that a crash leaves the old or the new file, never half of
// one: a temp file beside it (mkstemp, so never readable by others), fchmod to `mode`, fsync,
// rename. A symlinked file (dotfile managers) is replaced at its target, keeping the link.
// Throws std::runtime_error naming the file and the failing step.
void write_file_atomically(const std::filesystem::path& path, const std::string& content, mode_t mode);
// As above without the fsync: readers still never see half a file, but a crash may lose it (for
// what is written again, durably, soon after).
void write_file_atomically_unsynced(const std::filesystem::path& path, const std::string& content, mode_t mode);

}  // namespace support
