#pragma once
// A tool the model can call. The agent loop announces the call to the editor (tool_call with
// describe()'s title, kind and locations), then run() does the work, asking for permission
// through the context at the moment it knows what it is about to do.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json.hpp>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "acp/cancellation.hpp"
#include "acp/client_api.hpp"
#include "runtime/agent/session.hpp"

namespace runtime::tools {

enum class Permission { None, Edit, Execute };
enum class Authorization { Allowed, Rejected, Cancelled };

struct ToolDescription {
  std::string title;
  std::string kind = "other";     // ACP ToolKind
  boost::json::array locations;   // [{path, line?}]
};

struct ToolResult {
  std::string text;            // what the model gets back
  bool is_error = false;
  boost::json::array content;  // ACP ToolCallContent shown in the editor
  boost::json::value raw_output = nullptr;
};

// Thrown when the turn was cancelled while the tool ran.
struct ToolCancelled : std::runtime_error {
  ToolCancelled() : std::runtime_error("cancelled") {}
};

class ToolContext {
 public:
  virtual ~ToolContext() = default;
  virtual Session& session() = 0;
  virtual acp::ClientApi& client() = 0;
  virtual acp::CancelSource& cancel() = 0;
  virtual boost::asio::thread_pool& blocking_pool() = 0;
  virtual const std::string& tool_call_id() = 0;
  // Applies the session's mode and remembered answers, asking the editor if needed. `preview`
  // is ToolCallContent shown with the question (the diff of an edit). On Allowed the call is
  // marked in_progress.
  virtual boost::asio::awaitable<Authorization> authorize(Permission p, boost::json::array preview) = 0;
  // Sends a tool_call_update with these fields (status, content, ...).
  virtual void update(boost::json::object fields) = 0;
  // Shows the session's plan (ACP PlanEntry[]; replaces the previous one) and keeps it in the
  // session log, so session/load shows it again.
  virtual void show_plan(boost::json::array entries) = 0;
};

class Tool {
 public:
  virtual ~Tool() = default;
  virtual std::string name() const = 0;
  virtual ToolSpec spec() const = 0;
  virtual ToolDescription describe(const boost::json::object& args, const Session& session) const = 0;
  virtual boost::asio::awaitable<ToolResult> run(ToolContext& ctx, const boost::json::object& args) = 0;
};

std::unique_ptr<Tool> make_read_file_tool();
std::unique_ptr<Tool> make_apply_patch_tool();
std::unique_ptr<Tool> make_bash_tool();
std::unique_ptr<Tool> make_update_plan_tool();

// Input paths are absolute or relative to the session's folder.
std::filesystem::path resolve_path(const Session& session, const std::string& path);
// Result text for a refused permission, as the model should read it.
ToolResult refused_result(Authorization a, const Session& session);
ToolResult error_result(std::string message);
boost::json::object text_content(std::string text);

}  // namespace runtime::tools
