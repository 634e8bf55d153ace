#pragma once
// The turn loop (Codex's Task): send the conversation to the model, stream its text and
// reasoning to the editor, run the tools it calls through the tool router, feed the results
// back, until the model answers without tools and no Stop hook objects, a limit is hit or the
// user cancels. It reports through the EditorHost as engine events and returns a StopReason.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <vector>

#include "runtime/agent/hook_runtime.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/agent/tool_router.hpp"
#include "runtime/agent/turn_settings.hpp"
#include "runtime/protocol/editor_host.hpp"
#include "runtime/protocol/events.hpp"
#include "runtime/providers/model_provider.hpp"

namespace runtime {

class AgentLoop {
 public:
  AgentLoop(EditorHost& host, boost::asio::thread_pool& pool, std::vector<std::unique_ptr<tools::Tool>> builtins);

  // Runs one prompt turn. Model failures throw providers::ModelError with a message for the
  // user; the user's message stays in the history either way.
  boost::asio::awaitable<StopReason> run_turn(Session& session, Message user_message, providers::Model& model,
                                              const TurnSettings& settings, support::CancelSource& cancel);

  // Replaces the conversation so far with a summary written by the model (context compaction).
  // AGENTS.md files the agent had picked up from deeper folders are re-added with the summary.
  // Returns false (history untouched) when the model could not summarise.
  boost::asio::awaitable<bool> compact(Session& session, providers::Model& model, const TurnSettings& settings,
                                       support::CancelSource& cancel);
  // True when the last response filled most of the model's context window.
  static bool needs_compaction(const Session& session, const providers::Model& model);
  static std::int64_t context_window(const providers::Model& model);

  HookRuntime& hooks() { return hooks_; }
  EditorHost& host() { return hooks_.host(); }

 private:
  struct Turn;
  boost::asio::awaitable<std::optional<StopReason>> ask_model(Turn& t);
  boost::asio::awaitable<std::optional<StopReason>> after_answer(Turn& t);
  static std::string_view within_answer_limit(Turn& t, std::string_view text);
  static std::optional<Cost> cost_of_response(Turn& t);
  StopReason cut_answer(Turn& t);
  void keep_partial_answer(Turn& t, std::string_view mark);
  boost::asio::awaitable<bool> run_tool_calls(Turn& t, const std::vector<ToolCall>& calls);

  HookRuntime hooks_;
  ToolRouter router_;
};

}  // namespace runtime
