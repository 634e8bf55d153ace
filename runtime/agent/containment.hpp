#pragma once
// Where a path lies for the session (DESIGN §11): inside its roots, outside them, in the config
// root (its hooks run code, so edits there ask), or a secret file (never touched). A path is
// judged after resolving `..` and the symlinks of its longest existing prefix, so neither
// `../../x` nor a symlinked folder inside a root leads out unnoticed.
#include <filesystem>
#include <vector>

namespace runtime::containment {

// Ordered from least to most guarded: of several paths, a call is judged by its most guarded.
// Credentials: a secret file (credentials.yaml, mcp_tokens.json, a process's environ).
enum class Place { Inside, Outside, ConfigRoot, Credentials };
enum class Access { Read, Write };

struct Scope {
  std::vector<std::filesystem::path> roots;       // read and edit (the session's folders)
  std::vector<std::filesystem::path> read_roots;  // read only, with all they hold (skill folders)
  std::vector<std::filesystem::path> read_files;  // read only, these files alone (AGENTS.md files)
  std::filesystem::path config_root;              // edits here ask even inside a root
  std::vector<std::filesystem::path> secret_files;  // no tool reads or writes them (credentials, MCP tokens)
};

// `..` and every symlink of the longest existing prefix resolved (weakly_canonical); the rest
// normalised lexically. Never throws: a path that cannot be resolved comes back normalised.
std::filesystem::path resolve(const std::filesystem::path& absolute);

// `path` is `root` or lies under it; both already resolved.
bool within(const std::filesystem::path& path, const std::filesystem::path& root);

// A path whose file depends on the process that opens it (/proc, /dev/fd, /dev/stdin, ...):
// judged here, another process (the editor) would open another file.
bool names_process_file(const std::filesystem::path& absolute);

// The most guarded place among `paths` (absolute) for this access. Blocks on the file system.
Place classify(const Scope& scope, Access access, const std::vector<std::filesystem::path>& paths);

// The same for paths and a scope already resolved on another machine (an ssh executor's
// `realpath -m`): nothing is looked up here.
Place classify_resolved(const Scope& resolved, Access access, const std::vector<std::filesystem::path>& paths);

// The scope of a machine's own openvaala files: its config root (`~/.config/openvaala` there)
// with credentials.yaml and mcp_tokens.json as secrets.
void guard_config_root(Scope& scope, const std::filesystem::path& config_root);

}  // namespace runtime::containment
