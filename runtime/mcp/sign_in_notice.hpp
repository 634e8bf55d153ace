#pragma once
// How a session shows an MCP server's OAuth sign-in to any editor: the authorization URL as an
// agent message, and a tool call "Sign in to MCP server <id>" that stays pending until the
// redirect arrives (completed) or the sign-in fails or is cancelled (failed). Neither is
// journaled: they are live events only. (An editor with URL-mode elicitation can get another
// SignInPresenter.)
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

  EditorHost& host_;
  std::string session_id_;
  int count_ = 0;
};

}  // namespace runtime::mcp
