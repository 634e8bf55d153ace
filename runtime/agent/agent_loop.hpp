#pragma once
// The turn loop (Codex's Task): send the conversation to the model, stream its text and
// reasoning to the editor, run the tools it calls, feed the results back, until the model
// answers without tools, a limit is hit or the user cancels.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "acp/client_api.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/providers/model_provider.hpp"
#include "runtime/tools/tool.hpp"

namespace runtime {

struct TurnSettings {
  int max_turn_requests = 100;
  std::string system_prompt;
};

class AgentLoop {
 public:
  AgentLoop(acp::ClientApi& client, boost::asio::thread_pool& pool, std::vector<std::unique_ptr<tools::Tool>> tools);

  // Runs one prompt turn; returns the ACP stop reason. Model failures throw acp::RpcError with
  // a message for the user; the user's message stays in the history either way.
  boost::asio::awaitable<std::string> run_turn(Session& session, Message user_message, providers::ModelClient& model,
                                               const TurnSettings& settings, acp::CancelSource& cancel);

  std::vector<ToolSpec> tool_specs() const;

 private:
  class CallContext;
  boost::asio::awaitable<Message> run_tool_call(Session& session, const ToolCall& call, acp::CancelSource& cancel);
  void send(Session& session, boost::json::object update);

  acp::ClientApi& client_;
  boost::asio::thread_pool& pool_;
  std::vector<std::unique_ptr<tools::Tool>> tools_;
};

}  // namespace runtime
