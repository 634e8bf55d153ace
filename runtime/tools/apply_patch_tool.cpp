// apply_patch: edits files with the Codex patch envelope. Every file is read and every hunk
// applied in memory before anything is written, so a hunk that does not apply leaves the disk
// untouched; the editor sees the diffs in the permission prompt and the tool call.
#include "support/json_read.hpp"
#include "support/run_blocking.hpp"
#include "runtime/tools/apply_patch.hpp"
#include "runtime/tools/tool.hpp"
#include "runtime/tools/tool_paths.hpp"

namespace runtime::tools {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

const char* kDescription =
    "Edit files. The input is a patch in this format:\n"
    "*** Begin Patch\n"
    "*** Update File: path/to/file.py\n"
    "@@ def greet():\n"
    " context line\n"
    "-old line\n"
    "+new line\n"
    "*** Add File: path/new.txt\n"
    "+every line of the new file starts with +\n"
    "*** Delete File: path/old.txt\n"
    "*** End Patch\n"
    "Use `*** Move to: new/path` right after an Update File line to rename. Give 3 lines of context around "
    "each change; paths are relative to the working directory. All hunks must apply or nothing is written.";

// Every path the patch names (adds, updates, deletes, moves to), as written in it.
std::vector<std::string> named_paths(const Patch& patch) {
  std::vector<std::string> out;
  for (const auto& op : patch.ops) {
    std::visit([&](const auto& o) { out.push_back(o.path); }, op);
    if (auto* update = std::get_if<UpdateFileOp>(&op); update && update->move_to) out.push_back(*update->move_to);
  }
  return out;
}

// Where each file the patch names is opened (path_to_open), by its name in the patch; the
// refusal when one of them may not be handed to the editor.
boost::asio::awaitable<std::optional<ToolResult>> open_paths(ToolContext& ctx, const Patch& patch,
                                                             std::map<std::string, fs::path>& opened) {
  const bool through_editor = ctx.executor().opens_elsewhere(false) || ctx.executor().opens_elsewhere(true);
  for (const auto& name : named_paths(patch)) {
    auto path = co_await path_to_open(ctx, name, through_editor);
    if (!path) co_return process_file_result(name);
    opened[name] = *path;
  }
  co_return std::nullopt;
}

// Present contents of every file the patch reads (through the editor where it reads files). A file
// that is not there is left out (compute_patch_changes reports it); a read that fails is the error.
boost::asio::awaitable<std::optional<ToolResult>> read_current(ToolContext& ctx, const Patch& patch,
                                                               const std::map<std::string, fs::path>& opened,
                                                               std::map<std::string, std::string>& current) {
  for (const auto& path : paths_to_read(patch)) {
    const auto& abs = opened.at(path);
    try {
      auto info = co_await ctx.executor().stat(abs.string(), &ctx.cancel());
      if (!info.exists || info.is_directory) continue;
      current[path] = co_await ctx.executor().read_file(abs.string(), &ctx.cancel());
    } catch (const ExecutorError& e) {
      if (ctx.cancel().cancelled()) throw ToolCancelled();
      co_return error_result(e.what());
    }
  }
  co_return std::nullopt;
}

// Writes (or, without new text, removes) one file where the call runs (on local through the
// editor where it writes files, so its buffers follow); "" or what went wrong.
boost::asio::awaitable<std::string> write_one(ToolContext& ctx, const fs::path& path, const std::string* text) {
  try {
    if (!text) co_await ctx.executor().remove_file(path.string(), &ctx.cancel());
    else co_await ctx.executor().write_file(path.string(), *text, &ctx.cancel());
  } catch (const ExecutorError& e) {
    if (ctx.cancel().cancelled()) throw ToolCancelled();
    co_return e.what();
  }
  co_return std::string();
}

// One call's patch, from approval() through prepare() to run().
struct PatchCall {
  Patch patch;
  std::map<std::string, fs::path> opened;  // where each named file is opened, by its name in the patch
  std::vector<FileChange> changes;         // computed by prepare()
  std::vector<ToolContent> diffs;
};

// An added file that is there already is an error the pure layer needs to see.
boost::asio::awaitable<std::optional<ToolResult>> refuse_existing_adds(ToolContext& ctx, const PatchCall& call) {
  for (const auto& op : call.patch.ops) {
    auto* add = std::get_if<AddFileOp>(&op);
    if (!add) continue;
    const auto& abs = call.opened.at(add->path);
    FileInfo info;
    try {
      info = co_await ctx.executor().stat(abs.string(), &ctx.cancel());
    } catch (const ExecutorError& e) {
      co_return error_result(e.what());
    }
    if (info.exists) co_return error_result("Cannot add " + abs.string() + ": the file already exists; use '*** Update File:' to change it.");
  }
  co_return std::nullopt;
}

class ApplyPatchTool : public Tool {
 public:
  std::string name() const override { return "apply_patch"; }

  ToolSpec spec() const override {
    return {name(), kDescription,
            json::object{{"type", "object"},
                         {"properties", json::object{{"patch", json::object{{"type", "string"},
                                                                            {"description", "The whole patch"}}},
                                                     {"executor", executor_property()}}},
                         {"required", json::array{"patch"}}}};
  }

  ToolDescription describe(const json::object& args, const ToolEnv& env) const override {
    ToolDescription d;
    d.kind = ToolKind::Edit;
    d.title = "Edit files";
    auto parsed = parse_patch(support::str_at(args, "patch"));
    const auto where = on_executor_suffix(args, env);
    if (auto* patch = std::get_if<Patch>(&parsed)) {
      bool all_deletes = !patch->ops.empty();
      std::string names;
      for (const auto& op : patch->ops) {
        all_deletes = all_deletes && std::holds_alternative<DeleteFileOp>(op);
        auto name_of = [&](const std::string& path) {
          auto abs = resolve_path(env, path);
          // Files on another executor are not the editor's to open.
          if (where.empty()) d.locations.push_back(ToolLocation{abs.string(), std::nullopt});
          return where.empty() ? abs.lexically_relative(env.cwd).string() : path;
        };
        std::visit([&](const auto& o) { names += (names.empty() ? "" : ", ") + name_of(o.path); }, op);
        // A move is named by where it goes too: that is where it writes.
        if (auto* update = std::get_if<UpdateFileOp>(&op); update && update->move_to)
          names += " → " + name_of(*update->move_to);
      }
      if (all_deletes) d.kind = ToolKind::Delete;
      d.title = (all_deletes ? "Delete " : "Edit ") + names + where;
    }
    return d;
  }

  bool runs_on_executor() const override { return true; }

  // An edit's files, resolved as they will be opened; the patch is the preview until prepare()
  // has the diffs.
  boost::asio::awaitable<ApprovalRequest> approval(ToolContext& ctx, const json::object& args) override {
    ApprovalRequest request;
    request.permission = Permission::Edit;
    if (ctx.executor().info().read_only) {
      request.refusal =
          error_result("Executor '" + ctx.env().executor + "' is read-only: apply_patch cannot change files there.");
      co_return request;
    }
    auto* patch_text = args.if_contains("patch");
    if (!patch_text || !patch_text->is_string()) {
      request.refusal = error_result("apply_patch needs a 'patch' string.");
      co_return request;
    }
    auto parsed = parse_patch(patch_text->as_string());
    if (auto* err = std::get_if<PatchError>(&parsed)) {
      request.refusal = error_result("Invalid patch: " + err->message);
      co_return request;
    }
    auto call = std::make_shared<PatchCall>();
    call->patch = std::move(std::get<Patch>(parsed));
    if (auto refusal = co_await open_paths(ctx, call->patch, call->opened)) {
      request.refusal = std::move(*refusal);
      co_return request;
    }
    for (const auto& [_, p] : call->opened) request.paths.push_back(p);
    request.preview.push_back(TextContent{std::string(patch_text->as_string())});
    ctx.prepared() = std::move(call);
    co_return request;
  }

  // Reads the files and applies every hunk in memory: a patch that does not apply ends the call
  // with nothing written, and the diffs become the preview.
  boost::asio::awaitable<std::optional<ToolResult>> prepare(ToolContext& ctx, const json::object&,
                                                            ApprovalRequest& request) override {
    auto& call = *std::any_cast<std::shared_ptr<PatchCall>&>(ctx.prepared());
    std::map<std::string, std::string> current;
    if (auto error = co_await read_current(ctx, call.patch, call.opened, current)) co_return error;
    if (auto error = co_await refuse_existing_adds(ctx, call)) co_return error;
    auto computed = compute_patch_changes(call.patch, current);
    if (auto* err = std::get_if<PatchError>(&computed))
      co_return error_result("The patch does not apply, nothing was changed: " + err->message);
    call.changes = std::move(std::get<std::vector<FileChange>>(computed));
    for (const auto& c : call.changes) {
      auto target = resolve_path(ctx.env(), c.move_to.value_or(c.path));
      call.diffs.push_back(DiffContent{target.string(), c.old_text, c.new_text.value_or("")});
    }
    request.preview = call.diffs;
    co_return std::nullopt;
  }

  boost::asio::awaitable<ToolResult> run(ToolContext& ctx, const json::object&) override {
    const auto& env = ctx.env();
    auto& call = *std::any_cast<std::shared_ptr<PatchCall>&>(ctx.prepared());
    const auto& changes = call.changes;
    const auto& opened = call.opened;
    auto diffs = call.diffs;
    std::string summary = "Success. Updated the following files:";
    for (const auto& c : changes) {
      // Removed by its own name: deleting a symlink removes the link, not its target.
      auto from = resolve_path(env, c.path);
      const auto& to = opened.at(c.move_to.value_or(c.path));
      std::string error;
      if (c.new_text) error = co_await write_one(ctx, to, &*c.new_text);
      if (error.empty() && (!c.new_text || c.move_to)) error = co_await write_one(ctx, from, nullptr);
      if (!error.empty()) co_return error_result("Writing failed part way: " + error + "\n" + summary);
      char letter = !c.old_text ? 'A' : !c.new_text ? 'D' : 'M';
      summary += "\n" + std::string(1, letter) + " " + resolve_path(env, c.move_to.value_or(c.path)).lexically_relative(env.cwd).string();
    }
    ToolResult r;
    r.text = std::move(summary);
    r.content = std::move(diffs);
    co_return r;
  }
};

}  // namespace

std::unique_ptr<Tool> make_apply_patch_tool() { return std::make_unique<ApplyPatchTool>(); }

}  // namespace runtime::tools
