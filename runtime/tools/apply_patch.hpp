#pragma once
// The Codex patch envelope (`*** Begin Patch` ... `*** End Patch`): parsing, and computing the
// new file contents from the old ones. Pure functions, no I/O: the apply_patch tool reads every
// file the patch touches first, calls compute_patch_changes, and only writes when every hunk
// applied, so a bad hunk never leaves a file half written.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace runtime::tools {

// One `@@` section of an `*** Update File:` block.
struct PatchChunk {
  std::vector<std::string> context_headers;  // text after `@@ ` lines (may be empty)
  std::vector<std::string> old_lines;         // context + removed lines, in order
  std::vector<std::string> new_lines;         // context + added lines, in order
  bool is_end_of_file = false;                // `*** End of File` marker followed the chunk
};

struct AddFileOp {
  std::string path;
  std::string contents;
};
struct DeleteFileOp {
  std::string path;
};
struct UpdateFileOp {
  std::string path;
  std::optional<std::string> move_to;  // `*** Move to:`
  std::vector<PatchChunk> chunks;
};
using PatchOp = std::variant<AddFileOp, DeleteFileOp, UpdateFileOp>;

struct Patch {
  std::vector<PatchOp> ops;
};

struct PatchError {
  std::string message;  // names the line number (parse) or the file and hunk number (apply)
};

// Parses the envelope. Errors say which line is wrong and what was expected there.
std::variant<Patch, PatchError> parse_patch(std::string_view text);

// What one op does to the disk. old_text is nullopt for a new file, new_text nullopt for a delete.
struct FileChange {
  std::string path;                      // as written in the patch
  std::optional<std::string> move_to;    // rename target, as written in the patch
  std::optional<std::string> old_text;
  std::optional<std::string> new_text;
};

// `current` maps each path the patch updates, deletes or adds (as written in the patch) to its
// present contents; a path missing from the map is a file that does not exist. All-or-nothing:
// the first hunk that does not apply returns an error naming the file and the hunk (1-based).
// Ops run in order, so a later op sees what an earlier one did to the same path. Updated files
// keep their line endings (CRLF when every line had one) and their final-newline convention.
std::variant<std::vector<FileChange>, PatchError> compute_patch_changes(
    const Patch& patch, const std::map<std::string, std::string>& current);

// Paths (as written) whose present contents (or existence, for adds) compute_patch_changes needs.
std::vector<std::string> paths_to_read(const Patch& patch);

}  // namespace runtime::tools
