#pragma once
// The editor as the engine sees it: where events go, and what it can do for a session (read and
// write files with unsaved buffers, run terminals, ask the user). runtime/server implements it
// over ACP; unit tests implement it in memory.
#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/protocol/events.hpp"
#include "runtime/protocol/executor.hpp"
#include "support/cancellation.hpp"
#include "support/terminal.hpp"

namespace runtime {

// The editor answered a request with an error (or the connection is gone).
struct EditorError : std::runtime_error {
  EditorError(int code, const std::string& message) : std::runtime_error(message), code(code) {}
  int code;
};

using support::TerminalExit;
using support::TerminalOutput;

// A question to the user before a tool runs.
struct PermissionRequest {
  std::string tool_call_id;
  std::string tool_name;
  // What an "always" answer is remembered for ("`npm test`", "edits in this workspace"), named in
  // the options; empty: nothing is, and only the once answers are offered.
  std::string remembers;
  ToolCallFields call;    // the call as the user should see it (title, kind, diff preview, input)
};

enum class PermissionAnswer { AllowOnce, AllowAlways, RejectOnce, RejectAlways, Cancelled };

// Which kinds of questions from an MCP server (elicitation) the editor can put to the user.
struct ElicitationModes {
  bool form = false;  // a form built from a JSON schema
  bool url = false;   // a URL the user opens (sign-in, payment, ...)
  bool any() const { return form || url; }
};

class EditorHost {
 public:
  virtual ~EditorHost() = default;

  virtual void emit(const std::string& session_id, SessionEvent event) = 0;
  // Events emitted together (a session/load replay's batch): the host may send them as one burst.
  virtual void emit_all(const std::string& session_id, std::vector<SessionEvent> events) {
    for (auto& event : events) emit(session_id, std::move(event));
  }
  // A session's presentation (runtime/server/session_presentation.hpp): one being opened, whose
  // notices and slash commands wait until the editor has the session/new|load|resume answer; the
  // answer is out; it closed (what was shown of it is forgotten).
  virtual void session_opening(const std::string& /*session_id*/) {}
  virtual void session_announced(const std::string& /*session_id*/) {}
  virtual void session_closed(const std::string& /*session_id*/) {}
  // Resumes once the editor has read most of what was emitted (at once while it keeps up, or
  // when `cancel` fires). The turn waits here before reading more of the model's stream.
  virtual boost::asio::awaitable<void> wait_for_editor(support::CancelSource* /*cancel*/) { co_return; }

  virtual bool can_read_files() const = 0;
  virtual bool can_write_files() const = 0;
  virtual bool has_terminals() const = 0;
  // Whether sub-agents may run as sessions of their own (SubagentChanged), else they report into
  // their parent's session.
  virtual bool shows_subagents() const { return false; }
  virtual ElicitationModes elicitation_modes() const { return {}; }

  // All of these throw EditorError when the editor refuses or fails.
  virtual boost::asio::awaitable<PermissionAnswer> ask_permission(const std::string& session_id,
                                                                  PermissionRequest request,
                                                                  support::CancelSource* cancel) = 0;
  virtual boost::asio::awaitable<std::string> read_text_file(const std::string& session_id, const std::string& path,
                                                             std::optional<std::int64_t> line,
                                                             std::optional<std::int64_t> limit,
                                                             support::CancelSource* cancel) = 0;
  virtual boost::asio::awaitable<void> write_text_file(const std::string& session_id, const std::string& path,
                                                       const std::string& content, support::CancelSource* cancel) = 0;
  virtual boost::asio::awaitable<std::string> terminal_create(const std::string& session_id, const std::string& command,
                                                              const std::vector<std::string>& args,
                                                              const std::string& cwd, std::int64_t output_byte_limit,
                                                              support::CancelSource* cancel) = 0;
  virtual boost::asio::awaitable<TerminalOutput> terminal_output(const std::string& session_id,
                                                                 const std::string& terminal_id) = 0;
  virtual boost::asio::awaitable<TerminalExit> terminal_wait_for_exit(const std::string& session_id,
                                                                      const std::string& terminal_id,
                                                                      support::CancelSource* cancel) = 0;
  virtual boost::asio::awaitable<void> terminal_kill(const std::string& session_id, const std::string& terminal_id) = 0;
  virtual boost::asio::awaitable<void> terminal_release(const std::string& session_id,
                                                        const std::string& terminal_id) = 0;
  // Puts a question to the user (ACP elicitation/create): `request` holds mode ("form" or "url"),
  // message and the mode's fields (requestedSchema; url and elicitationId). Scoped to the
  // session and, when not empty, the tool call. Returns {action, content?} as the editor
  // answered; an editor that cannot ask declines.
  virtual boost::asio::awaitable<boost::json::object> elicit(const std::string& /*session_id*/,
                                                             const std::string& /*tool_call_id*/,
                                                             boost::json::object /*request*/,
                                                             support::CancelSource* /*cancel*/) {
    co_return boost::json::object{{"action", "decline"}};
  }
  // The URL question `elicitation_id` was completed (ACP elicitation/complete).
  virtual void elicitation_complete(const std::string& /*elicitation_id*/) {}

  // `local` as a session's tools reach it: through the editor's fs/* and terminal/* where it
  // offers them (it sees unsaved buffers; the user watches commands run), the rest on `local`.
  virtual std::shared_ptr<Executor> local_for_tools(const std::string& /*session_id*/, std::shared_ptr<Executor> local) {
    return local;
  }
};

}  // namespace runtime
