#pragma once
// The engine's EditorHost over an ACP connection: events become session/update notifications,
// file, terminal and permission requests become client calls, and the client's errors become
// EditorError.
#include "acp/client_api.hpp"
#include "runtime/protocol/editor_host.hpp"
#include "runtime/server/session_presentation.hpp"

namespace runtime::server {

class AcpEditorHost : public EditorHost {
 public:
  explicit AcpEditorHost(acp::ClientApi& client) : client_(client) {}

  void emit(const std::string& session_id, SessionEvent event) override;
  void emit_all(const std::string& session_id, std::vector<SessionEvent> events) override;
  void session_opening(const std::string& session_id) override { presentation_.opening(session_id); }
  void session_announced(const std::string& session_id) override;
  void session_closed(const std::string& session_id) override { presentation_.closed(session_id); }
  SessionPresentation& presentation() { return presentation_; }
  boost::asio::awaitable<void> wait_for_editor(support::CancelSource* cancel) override {
    return client_.connection().wait_until_writable(cancel);
  }
  std::shared_ptr<Executor> local_for_tools(const std::string& session_id, std::shared_ptr<Executor> local) override;
  bool can_read_files() const override { return client_.capabilities().fs_read; }
  bool can_write_files() const override { return client_.capabilities().fs_write; }
  bool has_terminals() const override { return client_.capabilities().terminal; }
  bool shows_subagents() const override { return client_.capabilities().subagents; }
  ElicitationModes elicitation_modes() const override {
    return {client_.capabilities().elicitation_form, client_.capabilities().elicitation_url};
  }

  boost::asio::awaitable<PermissionAnswer> ask_permission(const std::string& session_id, PermissionRequest request,
                                                          support::CancelSource* cancel) override;
  boost::asio::awaitable<std::string> read_text_file(const std::string& session_id, const std::string& path,
                                                     std::optional<std::int64_t> line, std::optional<std::int64_t> limit,
                                                     support::CancelSource* cancel) override;
  boost::asio::awaitable<void> write_text_file(const std::string& session_id, const std::string& path,
                                               const std::string& content, support::CancelSource* cancel) override;
  boost::asio::awaitable<std::string> terminal_create(const std::string& session_id, const std::string& command,
                                                      const std::vector<std::string>& args, const std::string& cwd,
                                                      std::int64_t output_byte_limit,
                                                      support::CancelSource* cancel) override;
  boost::asio::awaitable<TerminalOutput> terminal_output(const std::string& session_id,
                                                         const std::string& terminal_id) override;
  boost::asio::awaitable<TerminalExit> terminal_wait_for_exit(const std::string& session_id,
                                                              const std::string& terminal_id,
                                                              support::CancelSource* cancel) override;
  boost::asio::awaitable<void> terminal_kill(const std::string& session_id, const std::string& terminal_id) override;
  boost::asio::awaitable<void> terminal_release(const std::string& session_id, const std::string& terminal_id) override;
  boost::asio::awaitable<boost::json::object> elicit(const std::string& session_id, const std::string& tool_call_id,
                                                     boost::json::object request, support::CancelSource* cancel) override;
  void elicitation_complete(const std::string& elicitation_id) override {
    if (client_.capabilities().elicitation_url) client_.complete_elicitation(elicitation_id);
  }

 private:
  acp::ClientApi& client_;
  SessionPresentation presentation_;
};

}  // namespace runtime::server
