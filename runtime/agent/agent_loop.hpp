#pragma once
// The turn loop (Codex's Task): send the conversation to the model, stream its text and
// reasoning to the editor, run the tools it calls (with PreToolUse / PostToolUse hooks and the
// session's permission policy), feed the results back, until the model answers without tools
// and no Stop hook objects, a limit is hit or the user cancels.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "acp/client_api.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/providers/model_provider.hpp"
#include "runtime/sessions/session_store.hpp"
#include "runtime/tools/tool.hpp"

namespace runtime {

struct TurnSettings {
  int max_turn_requests = 100;
  std::string system_prompt;
  std::string turn_id;
  std::vector<tools::Tool*> extra_tools;  // this turn's MCP tools
  std::shared_ptr<const hooks::HookSet> hooks;
  boost::json::array prompt_blocks;  // what the user sent, kept with the message in the session log
  // Inside a sub-agent (spawn_agent): its id and type reach every hook, and the end of its turn
  // fires SubagentStop instead of Stop.
  std::optional<std::string> agent_id;
  std::optional<std::string> agent_type;
};

class AgentLoop {
 public:
  AgentLoop(acp::ClientApi& client, boost::asio::thread_pool& pool, std::vector<std::unique_ptr<tools::Tool>> tools);

  // Runs one prompt turn; returns the ACP stop reason. Model failures throw acp::RpcError with
  // a message for the user; the user's message stays in the history either way.
  boost::asio::awaitable<std::string> run_turn(Session& session, Message user_message, providers::ModelClient& model,
                                               const TurnSettings& settings, acp::CancelSource& cancel);

  std::vector<ToolSpec> tool_specs(const TurnSettings& settings) const;

  // Replaces the conversation so far with a summary written by the model (context compaction).
  // AGENTS.md files the agent had picked up from deeper folders are re-added with the summary.
  // Returns false (history untouched) when the model could not summarise.
  boost::asio::awaitable<bool> compact(Session& session, providers::ModelClient& model, const TurnSettings& settings,
                                       acp::CancelSource& cancel);
  // True when the last response filled most of the model's context window.
  static bool needs_compaction(const Session& session, const providers::ModelClient& model);
  static std::int64_t context_window(const providers::ModelClient& model);

  // Shows text to the user only (hook system messages and errors), never to the model.
  void notify_user(Session& session, const std::string& text);
  // Hook errors and system messages of an outcome, shown to the user.
  void report_hook_outcome(Session& session, const hooks::HookOutcome& outcome);

  boost::asio::thread_pool& pool() { return pool_; }

  // Appends to the session's log; a failing disk is logged, never fatal to the turn.
  static void record(Session& session, sessions::RecordBody body);

 private:
  class CallContext;
  struct ToolCallOutcome {
    Message result;
    bool stop_turn = false;
  };
  boost::asio::awaitable<ToolCallOutcome> run_tool_call(Session& session, const ToolCall& call,
                                                        const TurnSettings& settings, acp::CancelSource& cancel);
  tools::Tool* find_tool(const std::string& name, const TurnSettings& settings) const;
  std::string agents_md_after_read(Session& session, const boost::json::object& args);
  void send(Session& session, boost::json::object update);

  acp::ClientApi& client_;
  boost::asio::thread_pool& pool_;
  std::vector<std::unique_ptr<tools::Tool>> tools_;
};

}  // namespace runtime
