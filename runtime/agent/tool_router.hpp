#pragma once
// The one path of every tool call, built-in, MCP or sub-agent alike (Codex's
// ToolRegistry::dispatch_any): look the tool up (an unknown tool or bad arguments answer the
// model), announce the call, PreToolUse hooks (block, rewrite, allow), the approval policy
// (inside run, when the tool knows what it will do), run, PostToolUse hooks, the final status —
// journaled as it goes.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/agent/hook_runtime.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/agent/turn_settings.hpp"
#include "runtime/tools/tool.hpp"

namespace runtime {

class ToolRouter {
 public:
  ToolRouter(HookRuntime& hooks, std::vector<std::unique_ptr<tools::Tool>> builtins);

  // What the model is offered this turn: the built-ins, then the turn's own tools.
  std::vector<ToolSpec> specs(const TurnSettings& settings) const;
  tools::Tool* find(const std::string& name, const TurnSettings& settings) const;

  struct Outcome {
    Message result;          // the tool result the model gets
    bool stop_turn = false;  // a hook answered continue: false
  };
  boost::asio::awaitable<Outcome> dispatch(Session& session, const ToolCall& call, const TurnSettings& settings,
                                           support::CancelSource& cancel);

 private:
  struct Call;
  class Context;
  void announce(Call& c);
  boost::asio::awaitable<void> pre_tool_use(Call& c);
  boost::asio::awaitable<void> run(Call& c);
  boost::asio::awaitable<void> post_tool_use(Call& c);
  boost::asio::awaitable<bool> connect_executor(Call& c);
  Outcome finish(Call& c);
  std::string agents_md_after_read(Session& session, const std::string& path);

  HookRuntime& hooks_;
  std::vector<std::unique_ptr<tools::Tool>> builtins_;
  std::map<std::string, tools::Tool*, std::less<>> by_name_;
};

}  // namespace runtime
