#include "runtime/mcp/sign_in_notice.hpp"

namespace runtime::mcp {

std::string SessionSignIn::call_id(const std::string& server_id) const {
  return "mcp_sign_in_" + server_id + "_" + std::to_string(count_);
}

boost::asio::awaitable<void> SessionSignIn::show(const bridge::mcp::oauth::SignInPrompt& prompt, support::CancelSource&) {
  ++count_;
  host_.emit(session_id_, TextDelta{"The MCP server `" + prompt.server_id + "` needs you to sign in. Open this link: " +
                                    prompt.url + "\n\n"});
  ToolCallFields f;
  f.title = "Sign in to MCP server " + prompt.server_id;
  f.kind = ToolKind::Fetch;
  f.status = ToolStatus::Pending;
  f.content = std::vector<ToolContent>{TextContent{"Waiting for the sign-in at " + prompt.url}};
  host_.emit(session_id_, ToolCallBegin{call_id(prompt.server_id), std::move(f)});
  co_return;
}

void SessionSignIn::finished(const bridge::mcp::oauth::SignInPrompt& prompt, bool ok, const std::string& detail) {
  ToolCallFields f;
  f.status = ok ? ToolStatus::Completed : ToolStatus::Failed;
  f.content = std::vector<ToolContent>{
      TextContent{ok ? "Signed in to " + prompt.server_id : "The sign-in to " + prompt.server_id + " failed: " + detail}};
  host_.emit(session_id_, ToolCallUpdate{call_id(prompt.server_id), std::move(f)});
}

}  // namespace runtime::mcp
