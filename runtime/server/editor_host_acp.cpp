#include "runtime/server/editor_host_acp.hpp"

#include "runtime/server/editor_executor.hpp"
#include "runtime/server/session_updates.hpp"

namespace runtime::server {

namespace {

// Runs a client call, turning the client's error into the engine's. Callers name the lambda
// first: GCC 12 mishandles temporaries inside co_await expressions.
template <class F>
auto editor_call(F& call) -> decltype(call()) {
  try {
    co_return co_await call();
  } catch (const acp::RpcError& e) {
    throw EditorError(e.code(), e.what());
  }
}
}  // namespace

void AcpEditorHost::emit(const std::string& session_id, SessionEvent event) {
  // A replayed event that kept the log's text goes out as text (no parse, no serialisation),
  // written straight into the line that is sent.
  const auto send_journal = [&](const auto& journal) {
    client_.session_update_json(session_id, journal_update_size(journal),
                                [&](std::string& out) { append_journal_update(out, journal); });
  };
  if (const auto* chunk = std::get_if<JournalChunk>(&event)) return send_journal(*chunk);
  if (const auto* call = std::get_if<JournalToolCall>(&event)) return send_journal(*call);
  if (!presentation_.admit(session_id, event)) return;
  if (auto update = encode_update(event, client_.capabilities())) client_.session_update(session_id, std::move(*update));
}

void AcpEditorHost::session_announced(const std::string& session_id) {
  for (auto& event : presentation_.announced(session_id)) emit(session_id, std::move(event));
}

std::shared_ptr<Executor> AcpEditorHost::local_for_tools(const std::string& session_id,
                                                        std::shared_ptr<Executor> local) {
  return server::local_for_tools(*this, session_id, std::move(local));
}

void AcpEditorHost::emit_all(const std::string& session_id, std::vector<SessionEvent> events) {
  const auto burst = client_.connection().output_burst();
  for (auto& event : events) emit(session_id, std::move(event));
}

boost::asio::awaitable<PermissionAnswer> AcpEditorHost::ask_permission(const std::string& session_id,
                                                                       PermissionRequest request,
                                                                       support::CancelSource* cancel) {
  static const std::pair<const char*, PermissionAnswer> kOptions[] = {{"allow_once", PermissionAnswer::AllowOnce},
                                                                      {"allow_always", PermissionAnswer::AllowAlways},
                                                                      {"reject_once", PermissionAnswer::RejectOnce},
                                                                      {"reject_always", PermissionAnswer::RejectAlways}};
  std::vector<acp::PermissionOption> options{{"allow_once", "Allow", "allow_once"}};
  if (!request.remembers.empty()) options.push_back({"allow_always", "Always allow " + request.remembers, "allow_always"});
  options.push_back({"reject_once", "Reject", "reject_once"});
  if (!request.remembers.empty())
    options.push_back({"reject_always", "Always reject " + request.remembers, "reject_always"});
  auto tool_call = encode_tool_call(request.tool_call_id, request.call);
  std::optional<std::string> choice;
  try {
    choice = co_await client_.request_permission(session_id, std::move(tool_call), options, cancel);
  } catch (const acp::RpcError& e) {
    throw EditorError(e.code(), e.what());
  }
  if (choice)
    for (const auto& [id, answer] : kOptions)
      if (*choice == id) co_return answer;
  co_return PermissionAnswer::Cancelled;
}

boost::asio::awaitable<std::string> AcpEditorHost::read_text_file(const std::string& session_id, const std::string& path,
                                                                  std::optional<std::int64_t> line,
                                                                  std::optional<std::int64_t> limit,
                                                                  support::CancelSource* cancel) {
  auto call = [&] { return client_.read_text_file(session_id, path, line, limit, cancel); };
  co_return co_await editor_call(call);
}

boost::asio::awaitable<void> AcpEditorHost::write_text_file(const std::string& session_id, const std::string& path,
                                                            const std::string& content, support::CancelSource* cancel) {
  auto call = [&] { return client_.write_text_file(session_id, path, content, cancel); };
  co_await editor_call(call);
}

boost::asio::awaitable<std::string> AcpEditorHost::terminal_create(const std::string& session_id,
                                                                   const std::string& command,
                                                                   const std::vector<std::string>& args,
                                                                   const std::string& cwd, std::int64_t output_byte_limit,
                                                                   support::CancelSource* cancel) {
  auto call = [&] { return client_.terminal_create(session_id, command, args, cwd, output_byte_limit, cancel); };
  co_return co_await editor_call(call);
}

boost::asio::awaitable<TerminalOutput> AcpEditorHost::terminal_output(const std::string& session_id,
                                                                      const std::string& terminal_id) {
  auto call = [&] { return client_.terminal_output(session_id, terminal_id); };
  co_return co_await editor_call(call);
}

boost::asio::awaitable<TerminalExit> AcpEditorHost::terminal_wait_for_exit(const std::string& session_id,
                                                                           const std::string& terminal_id,
                                                                           support::CancelSource* cancel) {
  auto call = [&] { return client_.terminal_wait_for_exit(session_id, terminal_id, cancel); };
  co_return co_await editor_call(call);
}

boost::asio::awaitable<void> AcpEditorHost::terminal_kill(const std::string& session_id, const std::string& terminal_id) {
  auto call = [&] { return client_.terminal_kill(session_id, terminal_id); };
  co_await editor_call(call);
}

boost::asio::awaitable<void> AcpEditorHost::terminal_release(const std::string& session_id,
                                                             const std::string& terminal_id) {
  auto call = [&] { return client_.terminal_release(session_id, terminal_id); };
  co_await editor_call(call);
}

boost::asio::awaitable<boost::json::object> AcpEditorHost::elicit(const std::string& session_id,
                                                                  const std::string& tool_call_id,
                                                                  boost::json::object request,
                                                                  support::CancelSource* cancel) {
  const auto modes = elicitation_modes();
  const auto* mode = request.if_contains("mode");
  const bool form = mode && mode->is_string() && mode->as_string() == "form";
  const bool url = mode && mode->is_string() && mode->as_string() == "url";
  // A mode the editor did not advertise (or none we know) is declined here, never sent.
  if (!((form && modes.form) || (url && modes.url))) co_return boost::json::object{{"action", "decline"}};
  request["sessionId"] = session_id;
  if (!tool_call_id.empty()) request["toolCallId"] = tool_call_id;
  auto call = [&] { return client_.create_elicitation(std::move(request), cancel); };
  co_return co_await editor_call(call);
}

}  // namespace runtime::server
