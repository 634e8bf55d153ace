// AGENTS.md: from the git root down to the working directory.
#include <sys/stat.h>

#include "runtime/engine/engine.hpp"
#include "support/file_io.hpp"
#include "runtime/engine/paths.hpp"
#include "support/text.hpp"

namespace runtime::engine {

namespace {

constexpr std::uintmax_t kMaxAgentsMdBytes = 1024 * 1024;

std::optional<AgentsMdFile> read_agents_md(const fs::path& dir) {
  fs::path p = dir / "AGENTS.md";
  auto size = regular_file_size(p);
  if (!size) return std::nullopt;
  auto text = support::read_file(p);
  if (!text) return std::nullopt;
  return agents_md_file(std::move(p), std::move(*text));
}

}  // namespace

fs::path find_git_root(const fs::path& dir) {
  fs::path d = dir.lexically_normal();
  if (!d.empty() && d.filename().empty()) d = d.parent_path();
  while (true) {
    struct stat st{};
    if (::lstat((d / ".git").c_str(), &st) == 0) return d;  // a folder, or a file (worktrees, submodules)
    fs::path parent = d.parent_path();
    if (parent == d || parent.empty()) return {};
    d = parent;
  }
}

std::vector<AgentsMdFile> load_agents_md_chain(const fs::path& cwd_in) {
  fs::path cwd = cwd_in.lexically_normal();
  if (!cwd.empty() && cwd.filename().empty()) cwd = cwd.parent_path();
  std::vector<AgentsMdFile> out;
  fs::path root = find_git_root(cwd);
  std::vector<fs::path> dirs;
  if (root.empty()) {
    dirs.push_back(cwd);
  } else {
    for (fs::path d = cwd;; d = d.parent_path()) {
      dirs.push_back(d);
      if (d == root || d.parent_path() == d) break;
    }
    std::reverse(dirs.begin(), dirs.end());
  }
  for (const auto& d : dirs)
    if (auto f = read_agents_md(d)) out.push_back(std::move(*f));
  return out;
}

std::optional<AgentsMdFile> agents_md_file(fs::path path, std::string text) {
  if (text.size() > kMaxAgentsMdBytes) {
    text.resize(kMaxAgentsMdBytes);
    text += "\n[... truncated: AGENTS.md files are read up to 1 MB]";
  }
  if (support::trim(text).empty()) return std::nullopt;
  return AgentsMdFile{std::move(path), std::move(text)};
}

std::string agents_md_prompt(const std::vector<AgentsMdFile>& files) {
  if (files.empty()) return {};
  std::string s =
      "# Project instructions (AGENTS.md)\n"
      "These AGENTS.md files describe how this project works, from the repository root down to the working "
      "directory. When they disagree, a deeper file takes precedence over the ones above it; the user's own "
      "requests take precedence over all of them.\n";
  for (std::size_t i = 0; i < files.size(); ++i) {
    s += "\n## " + files[i].path.string();
    if (i > 0) s += " (deeper: takes precedence over the files above)";
    s += "\n\n" + files[i].content;
    if (s.back() != '\n') s += '\n';
  }
  return s;
}

std::vector<fs::path> folders_below(fs::path cwd, const fs::path& path_read, bool path_read_is_folder) {
  std::vector<fs::path> out;
  cwd = cwd.lexically_normal();
  if (!cwd.empty() && cwd.filename().empty()) cwd = cwd.parent_path();
  const fs::path p = (path_read.is_absolute() ? path_read : cwd / path_read).lexically_normal();
  const auto rel = (path_read_is_folder ? p : p.parent_path()).lexically_relative(cwd);
  if (rel.empty() || rel == "." || *rel.begin() == "..") return out;
  fs::path d = cwd;
  for (const auto& part : rel) out.push_back(d /= part);
  return out;
}

std::vector<AgentsMdFile> agents_md_for_read(const SessionView& view, const fs::path& path_read,
                                             const std::set<fs::path>& already_included) {
  std::vector<AgentsMdFile> out;
  std::error_code ec;
  const bool is_folder = fs::is_directory(path_read.is_absolute() ? path_read : view.cwd / path_read, ec);
  for (const auto& d : folders_below(view.cwd, path_read, is_folder)) {
    if (already_included.count(d / "AGENTS.md")) continue;
    if (auto f = read_agents_md(d)) out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace runtime::engine
