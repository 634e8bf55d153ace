#pragma once
// Where a path lies for the session (DESIGN §11): inside its roots, outside them, in the config
// root (its hooks run code, so edits there ask), or the credentials file (never touched). A path
// is judged after resolving `..` and the symlinks of its longest existing prefix, so neither
// `../../x` nor a symlinked folder inside a root leads out unnoticed.
#include <filesystem>
#include <vector>

namespace runtime::containment {

// Ordered from least to most guarded: of several paths, a call is judged by its most guarded.
enum class Place { Inside, Outside, ConfigRoot, Credentials };
enum class Access { Read, Write };

struct Scope {
  std::vector<std::filesystem::path> roots;       // read and edit (the session's folders)
  std::vector<std::filesystem::path> read_roots;  // read only (folders of its skills and AGENTS.md files)
  std::filesystem::path config_root;              // edits here ask even inside a root
  std::filesystem::path credentials_file;         // no tool reads or writes it
};

// `..` and every symlink of the longest existing prefix resolved (weakly_canonical); the rest
// normalised lexically. Never throws: a path that cannot be resolved comes back normalised.
std::filesystem::path resolve(const std::filesystem::path& absolute);

// `path` is `root` or lies under it; both already resolved.
bool within(const std::filesystem::path& path, const std::filesystem::path& root);

// The most guarded place among `paths` (absolute) for this access. Blocks on the file system.
Place classify(const Scope& scope, Access access, const std::vector<std::filesystem::path>& paths);

}  // namespace runtime::containment
