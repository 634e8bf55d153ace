#pragma once
// A tool the model can call. The tool router announces the call to the editor (title, kind and
// locations from describe()), then run() does the work, asking for permission through the
// context at the moment it knows what it is about to do.
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
#include "runtime/protocol/editor_host.hpp"
#include "runtime/protocol/events.hpp"
#include "runtime/protocol/executor.hpp"
#include "runtime/protocol/tool_env.hpp"
#include "support/cancellation.hpp"

namespace runtime::tools {

// What a tool is about to do, for the session's approval policy. Reads ask only outside the
// session's folders.
enum class Permission { None, Read, Edit, Execute };
// Forbidden: no tool may touch the path in any mode (the credentials file); nobody was asked.
enum class Authorization { Allowed, Rejected, Cancelled, Forbidden };
// Where the files a call touches lie: Free (inside the session's folders: the mode alone
// decides), Guarded (outside them, or an edit in the config root: asks unless Full auto; Read
// only refuses edits), Forbidden (the credentials file).
enum class PathCheck { Free, Guarded, Forbidden };

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

class ToolContext {
 public:
  virtual ~ToolContext() = default;
  virtual const ToolEnv& env() = 0;
  virtual EditorHost& host() = 0;
  virtual support::CancelSource& cancel() = 0;
  virtual boost::asio::thread_pool& blocking_pool() = 0;
  virtual const std::string& tool_call_id() = 0;
  // The executor this call runs on (env().executor), connected: its working directory is env().cwd.
  virtual Executor& executor() = 0;
  // Applies the session's approval policy, asking the user if needed. `paths` (absolute) are
  // the files a Read or Edit touches: where they lie decides whether it asks (DESIGN §11).
  // `preview` is shown with the question (the diff of an edit). On Allowed the call is marked
  // in progress.
  virtual boost::asio::awaitable<Authorization> authorize(Permission p, std::vector<ToolContent> preview,
                                                          std::vector<std::filesystem::path> paths) = 0;
  // Where the files a Read or Edit touches lie, asked before touching them (apply_patch reads
  // the files it edits to show the diff, so it learns first whether it must ask before that).
  virtual boost::asio::awaitable<PathCheck> check_paths(Permission p, std::vector<std::filesystem::path> paths) = 0;
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
// Result text for a path no tool may touch (Authorization::Forbidden).
ToolResult forbidden_result();
ToolResult error_result(std::string message);

// The executor a call names (`executor`), else the session's default (env.executor).
std::string executor_of(const boost::json::object& args, const ToolEnv& env);
// The `executor` property of the tools that take one.
boost::json::object executor_property();
// " on <id>" for titles when the call does not run on local; "" on local.
std::string on_executor_suffix(const boost::json::object& args, const ToolEnv& env);

}  // namespace runtime::tools
