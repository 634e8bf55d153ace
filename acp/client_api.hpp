#pragma once
// Typed calls from the agent to the client (the editor): session updates, permission prompts,
// file system and terminals. Knows which of them the client advertised in `initialize`.
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "acp/connection.hpp"
#include "acp/schema/initialize.hpp"
#include "support/terminal.hpp"

namespace acp {

using ClientCapabilities = schema::ClientCapabilities;

struct PermissionOption {
  std::string option_id;
  std::string name;
  std::string kind;  // allow_once | allow_always | reject_once | reject_always
};

using support::TerminalExit;
using support::TerminalOutput;

class ClientApi {
 public:
  explicit ClientApi(Connection& conn) : conn_(conn) {}

  void set_capabilities(ClientCapabilities caps) { caps_ = caps; }
  const ClientCapabilities& capabilities() const { return caps_; }

  void session_update(const std::string& session_id, boost::json::object update);
  // The same with the update as JSON text that `write_update` appends (about `size` bytes), sent
  // as it is: the caller checked it.
  void session_update_json(const std::string& session_id, std::size_t size,
                           const std::function<void(std::string&)>& write_update);

  // Returns the chosen optionId, or nullopt when the outcome was "cancelled".
  awaitable<std::optional<std::string>> request_permission(const std::string& session_id,
                                                           boost::json::object tool_call,
                                                           const std::vector<PermissionOption>& options,
                                                           CancelSource* cancel);

  // elicitation/create: asks the user through a form (mode "form", requestedSchema) or a URL to
  // open (mode "url", url, elicitationId); `params` holds the mode's fields and the scope
  // (sessionId and toolCallId, or requestId). Returns the client's answer as it came ({action:
  // accept|decline|cancel, content?}); a cancel while waiting gives {action: "cancel"}.
  awaitable<boost::json::object> create_elicitation(boost::json::object params, CancelSource* cancel);
  // elicitation/complete: the URL elicitation `elicitation_id` is done (the page was finished).
  void complete_elicitation(const std::string& elicitation_id);

  awaitable<std::string> read_text_file(const std::string& session_id, const std::string& path,
                                        std::optional<std::int64_t> line,
                                        std::optional<std::int64_t> limit, CancelSource* cancel);
  awaitable<void> write_text_file(const std::string& session_id, const std::string& path,
                                  const std::string& content, CancelSource* cancel);

  awaitable<std::string> terminal_create(const std::string& session_id, const std::string& command,
                                         const std::vector<std::string>& args, const std::string& cwd,
                                         std::int64_t output_byte_limit, CancelSource* cancel);
  awaitable<TerminalOutput> terminal_output(const std::string& session_id, const std::string& terminal_id);
  awaitable<TerminalExit> terminal_wait_for_exit(const std::string& session_id,
                                                 const std::string& terminal_id, CancelSource* cancel);
  awaitable<void> terminal_kill(const std::string& session_id, const std::string& terminal_id);
  awaitable<void> terminal_release(const std::string& session_id, const std::string& terminal_id);

  Connection& connection() { return conn_; }

 private:
  Connection& conn_;
  ClientCapabilities caps_;
};

}  // namespace acp
