#pragma once
// The skill search's rules that the watch on its folders (runtime/agent/skill_watcher) applies too.
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace runtime::engine {

// The folders the search enters below `dir`, sorted: names not starting with '.', folders or
// symlinks to folders.
std::vector<std::filesystem::path> skill_search_subfolders(const std::filesystem::path& dir);

// A SKILL.md's modification time as SkillFolder keeps it (ns).
inline std::int64_t modified_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

}  // namespace runtime::engine
