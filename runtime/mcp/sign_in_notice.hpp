#pragma once
// How a session shows an MCP server's OAuth sign-in to the editor. Always a tool call "Sign in
// to MCP server <id>" that stays pending until the redirect arrives (completed) or the sign-in
// fails or is cancelled (failed). The link itself goes, when the editor advertises URL-mode
// elicitation, as an ACP `elicitation/create` (mode "url") scoped to that tool call, followed by
// `elicitation/complete` once signed in; a decline or cancel there abandons the sign-in. Other
// editors get the link as an agent message. None of it is journaled: live events only.
#include <string>

#include "bridge/mcp/oauth_flow.hpp"
#include "runtime/protocol/editor_host.hpp"

namespace runtime::mcp {

class SessionSignIn : public bridge::mcp::oauth::SignInPresenter {
 public:
  SessionSignIn(EditorHost& host, std::string session_id) : host_(host), session_id_(std::move(session_id)) {}

  boost::asio::awaitable<void> show(const bridge::mcp::oauth::SignInPrompt& prompt, support::CancelSource& sign_in) override;
  void finished(const bridge::mcp::oauth::SignInPrompt& prompt, bool ok, const std::string& detail) override;

 private:
  std::string call_id(const std::string& server_id) const;
  void show_link_as_message(const bridge::mcp::oauth::SignInPrompt& prompt);
  // True when the editor took the question (accepted or not); false: it could not ask.
  boost::asio::awaitable<bool> ask_editor(const bridge::mcp::oauth::SignInPrompt& prompt, support::CancelSource& sign_in);

  EditorHost& host_;
  std::string session_id_;
  int count_ = 0;
  std::string elicitation_id_;  // of the URL question in flight; empty: none was accepted
};

}  // namespace runtime::mcp
