#pragma once
// What one prompt turn runs with.
#include <boost/json.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/agent/hook_runtime.hpp"
#include "runtime/protocol/user_prompt.hpp"
#include "runtime/tools/tool.hpp"

namespace runtime {

struct TurnSettings {
  int max_turn_requests = 100;
  std::string system_prompt;
  // The turn's id; inside a sub-agent (spawn_agent) also its id and type, which reach every hook,
  // and the end of its turn fires SubagentStop instead of Stop.
  TurnScope scope;
  std::vector<tools::Tool*> extra_tools;  // this turn's MCP, spawn and plan tools
  // Asked before each model request: adds to extra_tools the tools of MCP servers that came up
  // since the turn began without them; true when it added any. Unset: nothing joins.
  std::function<bool()> join_late_tools;
  std::shared_ptr<const hooks::HookSet> hooks;
  UserPrompt prompt;  // what the user sent, kept with the message in the journal
};

}  // namespace runtime
