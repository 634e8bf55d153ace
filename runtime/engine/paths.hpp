#pragma once
// Paths as the engine's loaders see them: containment after symlinks, regular-file size, `~/`.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace runtime::engine {

namespace fs = std::filesystem;

// stat(2) after symlinks, never throwing: a regular file; a folder.
bool is_file(const fs::path& p);
bool is_dir(const fs::path& p);

// The file's size in bytes, or nullopt when it is not a regular file (after symlinks).
std::optional<std::uintmax_t> regular_file_size(const fs::path& p);

// `p` (already absolute) lies inside `root` after resolving symlinks of the existing part.
// Both are resolved with weakly_canonical.
bool path_within(const fs::path& root, const fs::path& p);

// `~/x` → $HOME/x; other paths unchanged.
fs::path expand_home(const std::string& p, const fs::path& home);

}  // namespace runtime::engine
