#pragma once
// The one path of every tool call, built-in, MCP or sub-agent alike (Codex's
// ToolRegistry::dispatch_any and orchestrator): look the tool up (an unknown tool or bad
// arguments answer the model), announce the call, PreToolUse hooks (block, rewrite, allow), the
// approval step (what the tool declares, where its files lie, the policy, the user's answer),
// then run, PostToolUse hooks, the final status — journaled as it goes. No tool asks by itself.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/agent/approval.hpp"
#include "runtime/agent/containment.hpp"
#include "runtime/agent/hook_runtime.hpp"
#include "runtime/protocol/executor_paths.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/agent/turn_settings.hpp"
#include "runtime/tools/tool.hpp"

namespace runtime {

class ToolRouter {
 public:
  ToolRouter(HookRuntime& hooks, std::vector<std::unique_ptr<tools::Tool>> builtins);

  // The one place a turn's tools are chosen (Codex's ToolRouter::from_context): the built-ins
  // every session offers (read_file, apply_patch, bash); beside them each turn offers
  // for_turn(): the session's MCP tools (only the servers `mcp_servers` names when set: an
  // agent's selection), then the turn's own (`extras`: spawn_agent, and update_plan for
  // top-level turns).
  static std::vector<std::unique_ptr<tools::Tool>> builtins();
  static std::vector<tools::Tool*> for_turn(const std::vector<tools::Tool*>& mcp_tools,
                                            const std::optional<std::vector<std::string>>& mcp_servers,
                                            std::vector<tools::Tool*> extras = {});

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
  boost::asio::awaitable<bool> approve(Call& c, Context& ctx);
  boost::asio::awaitable<bool> prepare(Call& c, Context& ctx, tools::ApprovalRequest& request);
  // Where a call's files lie, with their resolved paths (a read outside is remembered by their
  // folders); none when they could not be resolved.
  struct Placed {
    containment::Place place = containment::Place::Inside;
    std::vector<std::filesystem::path> resolved;
  };
  boost::asio::awaitable<approval::Verdict> decide(Call& c, const tools::ApprovalRequest& request, const Placed& placed);
  boost::asio::awaitable<approval::Verdict> ask(Call& c, std::vector<ToolContent> preview, const std::string& why,
                                                const approval::Memory& memory);
  boost::asio::awaitable<Placed> place_of(Call& c, containment::Access access, std::vector<std::filesystem::path> paths);
  boost::asio::awaitable<Placed> place_remote(Call& c, ExecutorPaths& there, containment::Access access,
                                              const std::vector<std::filesystem::path>& paths);
  Outcome finish(Call& c);
  std::string agents_md_after_read(Session& session, const std::string& path);

  HookRuntime& hooks_;
  std::vector<std::unique_ptr<tools::Tool>> builtins_;
  std::map<std::string, tools::Tool*, std::less<>> by_name_;
};

}  // namespace runtime
