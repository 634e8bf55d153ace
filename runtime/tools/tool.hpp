#pragma once
// A tool the model can call, and the contract the tool router holds it to (Codex's Approvable):
// the router announces the call (describe()), asks the tool what the call needs (approval():
// the permission, the files, a preview), decides and asks the user, marks the call in progress,
// and only then calls run(). No tool asks for permission itself, and every tool reaches files
// and processes through one executor (on local the editor's fs/terminal where it offers them).
#include <any>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json.hpp>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/protocol/conversation.hpp"
#include "runtime/protocol/events.hpp"
#include "runtime/protocol/executor.hpp"
#include "runtime/protocol/tool_env.hpp"
#include "support/cancellation.hpp"

namespace runtime::tools {

// What a tool is about to do, for the session's approval policy. Reads ask only outside the
// session's folders.
enum class Permission { None, Read, Edit, Execute };

struct ToolDescription {
  std::string title;
  ToolKind kind = ToolKind::Other;
  std::vector<ToolLocation> locations;
};

struct ToolResult {
  std::string text;  // what the model gets back
  bool is_error = false;
  std::vector<ToolContent> content;  // what the editor shows
  boost::json::value raw_output = nullptr;
};

// Thrown when the turn was cancelled while the tool ran.
struct ToolCancelled : std::runtime_error {
  ToolCancelled() : std::runtime_error("cancelled") {}
};

// What a call needs before it runs, declared by the tool (Tool::approval); the router decides
// from it (DESIGN §11) and asks the user when the policy says so.
struct ApprovalRequest {
  Permission permission = Permission::None;
  // The files a Read or Edit touches, absolute, as run() will open them: where they lie decides
  // whether it asks (the path judged is the path opened).
  std::vector<std::filesystem::path> paths;
  std::vector<ToolContent> preview;  // shown with the question (a patch, its diffs)
  // What an "Always allow" / "Always reject" answer to a command is remembered by (issue 36),
  // every key at once, and how the option names them: bash keys each part of its command
  // ("npm test"), an MCP tool its server and tool. Empty: no answer to it is remembered. (The
  // router keys an edit inside the roots by its root and a read outside by its folder:
  // approval::memory_of.)
  std::vector<std::string> keys;
  std::string keys_label;  // "`npm test`", "`git status` and `npm test`"
  // What the model is told when the user (or Read only) refuses; empty: refused_result(mode).
  std::string refused_text;
  // Set: the call ends with this result before anything is asked or run (bad arguments, a
  // files-only executor, a path the editor may not open).
  std::optional<ToolResult> refusal;
};

class ToolContext {
 public:
  virtual ~ToolContext() = default;
  virtual const ToolEnv& env() = 0;
  virtual support::CancelSource& cancel() = 0;
  virtual boost::asio::thread_pool& blocking_pool() = 0;
  virtual const std::string& tool_call_id() = 0;
  // The executor this call runs on (env().executor), connected: its working directory is env().cwd.
  // On local it is the editor's fs/* and terminal/* where the editor offers them.
  virtual Executor& executor() = 0;
  // What approval() and prepare() kept for run() (one call's state: a tool object serves every
  // session at once).
  virtual std::any& prepared() = 0;
  // Puts a question to the user (an MCP server's elicitation), scoped to this tool call.
  virtual boost::asio::awaitable<boost::json::object> elicit(boost::json::object request) = 0;
  // Shows progress in the editor's tool call (status, content, ...).
  virtual void update(ToolCallFields fields) = 0;
  // Shows the session's plan (replaces the previous one) and keeps it in the journal.
  virtual void show_plan(std::vector<PlanEntry> entries) = 0;
};

class Tool {
 public:
  virtual ~Tool() = default;
  virtual std::string name() const = 0;
  virtual ToolSpec spec() const = 0;
  virtual ToolDescription describe(const boost::json::object& args, const ToolEnv& env) const = 0;
  // Step 1: what the call needs (nothing by default). Touches no file's content: it may resolve
  // paths and look at the executor, nothing more.
  virtual boost::asio::awaitable<ApprovalRequest> approval(ToolContext&, const boost::json::object&) {
    co_return ApprovalRequest{};
  }
  // Step 2, reads only: work that improves the question, e.g. apply_patch reads the files it edits
  // to preview the diffs. The router calls it before asking when the files lie inside the
  // session's folders, else only after the user allowed (a guarded read never comes before the
  // answer). A result ends the call there.
  virtual boost::asio::awaitable<std::optional<ToolResult>> prepare(ToolContext&, const boost::json::object&,
                                                                     ApprovalRequest&) {
    co_return std::nullopt;
  }
  // Step 3, once allowed: the work.
  virtual boost::asio::awaitable<ToolResult> run(ToolContext& ctx, const boost::json::object& args) = 0;
  // The file a successful call read, if the tool reads one (AGENTS.md files of deeper folders
  // join the context after such a read).
  virtual std::optional<std::string> file_read(const boost::json::object&) const { return std::nullopt; }
  // Takes an `executor` argument (DESIGN §10): the router connects that executor before run().
  virtual bool runs_on_executor() const { return false; }
};

std::unique_ptr<Tool> make_read_file_tool();
std::unique_ptr<Tool> make_apply_patch_tool();
std::unique_ptr<Tool> make_bash_tool();
std::unique_ptr<Tool> make_update_plan_tool();

// Input paths are absolute or relative to the working directory.
std::filesystem::path resolve_path(const ToolEnv& env, const std::string& path);
// Result text for a refused permission, as the model should read it.
ToolResult refused_result(Mode mode);
// Result text for a path no tool may touch (the credentials file).
ToolResult forbidden_result();
ToolResult error_result(std::string message);

// The executor a call names (`executor`), else the session's default (env.executor).
std::string executor_of(const boost::json::object& args, const ToolEnv& env);
// The `executor` property of the tools that take one.
boost::json::object executor_property();
// " on <id>" for titles when the call does not run on local; "" on local.
std::string on_executor_suffix(const boost::json::object& args, const ToolEnv& env);

}  // namespace runtime::tools
