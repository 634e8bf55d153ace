#include "runtime/mcp/sign_in_notice.hpp"

#include <spdlog/spdlog.h>

#include "support/random_id.hpp"

namespace runtime::mcp {

namespace json = boost::json;

std::string SessionSignIn::call_id(const std::string& server_id) const {
  return "mcp_sign_in_" + server_id + "_" + std::to_string(count_);
}

void SessionSignIn::show_link_as_message(const bridge::mcp::oauth::SignInPrompt& prompt) {
  host_.emit(session_id_, TextDelta{"The MCP server `" + prompt.server_id + "` needs you to sign in. Open this link: " +
                                    prompt.url + "\n\n"});
}

boost::asio::awaitable<bool> SessionSignIn::ask_editor(const bridge::mcp::oauth::SignInPrompt& prompt,
                                                       support::CancelSource& sign_in) {
  const std::string id = support::random_id("openvaala-sign-in-");
  json::object request{{"mode", "url"},
                       {"message", "Sign in to the MCP server '" + prompt.server_id + "' so the agent can use its tools."},
                       {"url", prompt.url},
                       {"elicitationId", id}};
  json::object answer;
  try {
    answer = co_await host_.elicit(session_id_, call_id(prompt.server_id), std::move(request), &sign_in);
  } catch (const std::exception& e) {
    if (sign_in.cancelled()) co_return true;
    spdlog::warn("mcp {}: the editor could not show the sign-in link ({}); sending it as a message", prompt.server_id, e.what());
    co_return false;
  }
  const auto* action = answer.if_contains("action");
  if (action && action->is_string() && action->as_string() == "accept") {
    elicitation_id_ = id;
  } else {
    // The user said no (decline) or dismissed it (cancel): nobody will open the link.
    spdlog::info("mcp {}: the user did not open the sign-in link", prompt.server_id);
    sign_in.cancel();
  }
  co_return true;
}

boost::asio::awaitable<void> SessionSignIn::show(const bridge::mcp::oauth::SignInPrompt& prompt, support::CancelSource& sign_in) {
  ++count_;
  elicitation_id_.clear();
  ToolCallFields f;
  f.title = "Sign in to MCP server " + prompt.server_id;
  f.kind = ToolKind::Fetch;
  f.status = ToolStatus::Pending;
  f.content = std::vector<ToolContent>{TextContent{"Waiting for the sign-in at " + prompt.url}};
  host_.emit(session_id_, ToolCallBegin{call_id(prompt.server_id), std::move(f)});
  bool asked = false;  // (no co_await inside && : GCC 12 miscompiles it)
  if (host_.elicitation_modes().url) asked = co_await ask_editor(prompt, sign_in);
  if (!asked) show_link_as_message(prompt);
}

void SessionSignIn::finished(const bridge::mcp::oauth::SignInPrompt& prompt, bool ok, const std::string& detail) {
  if (ok && !elicitation_id_.empty()) host_.elicitation_complete(elicitation_id_);
  elicitation_id_.clear();
  ToolCallFields f;
  f.status = ok ? ToolStatus::Completed : ToolStatus::Failed;
  f.content = std::vector<ToolContent>{
      TextContent{ok ? "Signed in to " + prompt.server_id : "The sign-in to " + prompt.server_id + " failed: " + detail}};
  host_.emit(session_id_, ToolCallUpdate{call_id(prompt.server_id), std::move(f)});
}

}  // namespace runtime::mcp
