#pragma once
// One prompt of the user, start to end (Codex's run_task): `/compact`, slash commands (skills),
// UserPromptSubmit hooks, pending hook context, the turn's MCP, sub-agent and plan tools, then
// the turn loop; the turn's end is journaled (fsync) and a new title is shown.
#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>
#include <functional>
#include <memory>

#include "runtime/agent/session_manager.hpp"
#include "runtime/protocol/events.hpp"
#include "runtime/protocol/user_prompt.hpp"

namespace runtime {

class Task {
 public:
  struct Deps {
    SessionManager& sessions;  // a session's set-up before its first turn; sub-agents' own sessions
    EngineHost& engines;       // the skills a turn waits for
    SessionMcp& mcp;           // required MCP servers placed before a turn
    AgentLoop& loop;
    EditorHost& editor;
    boost::asio::thread_pool& pool;
    providers::ModelFactory open_model;  // empty: the real provider client
  };
  explicit Task(Deps deps);

  // Throws AgentError(InvalidRequest) when a prompt already runs in the session, and
  // providers::ModelError when the model cannot be used or fails.
  // `prompt` is what the user sent (the model gets user_message_from(prompt)). `on_started` is
  // called once the prompt is past its commands and UserPromptSubmit hooks and goes to the model
  // (a steered message that starts a turn answers then).
  boost::asio::awaitable<StopReason> run(std::shared_ptr<Session> session, UserPrompt prompt,
                                         support::CancelSource& request_cancel, std::function<void()> on_started = {});

 private:
  struct Prompt;
  boost::asio::awaitable<std::optional<StopReason>> before_turn(Prompt& p);
  boost::asio::awaitable<void> read_linked_resources(Prompt& p);
  boost::asio::awaitable<StopReason> turn(Prompt& p);
  // `stop_reason`: "error" when the turn threw; `title_before`: the journal's title at the prompt.
  void end_turn(Session& session, const char* stop_reason, const std::string& title_before);
  // A notice that the turn is not in the session's history, because of `why` (none when empty).
  void tell_unsaved(Session& session, const std::string& why);

  std::unique_ptr<providers::Model> open_model(providers::ResolvedModel model) const;

  Deps deps_;
  std::unique_ptr<tools::Tool> plan_tool_;
};

// The product's own instructions and the environment (the start of every system prompt).
std::string base_system_prompt(const Session& session);

}  // namespace runtime
