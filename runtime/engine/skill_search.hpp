#pragma once
// The skill search's rules that the watch on its folders (runtime/agent/skill_watcher) applies too.
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <vector>

#include "runtime/engine/engine.hpp"

namespace runtime::engine {

// The folders the search enters below `dir`, sorted: names not starting with '.', folders or
// symlinks to folders.
std::vector<std::filesystem::path> skill_search_subfolders(const std::filesystem::path& dir);

// A SKILL.md's stamp as SkillFolder keeps it, read at the wall clock's `now_ns`.
FileStamp stamp_of(const struct stat& st, std::int64_t now_ns);
// The wall clock (CLOCK_REALTIME, the file timestamps' clock) in ns.
std::int64_t wall_clock_ns();
// Whether the file may have changed since `seen` was taken (now stat'ed as `st`).
bool changed_since(const FileStamp& seen, const struct stat& st);

}  // namespace runtime::engine
