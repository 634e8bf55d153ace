#pragma once
// spawn_agent: runs a sub-conversation with another (or the same) agent — its own instructions,
// skills, model and MCP servers — and returns its final answer to the calling model. For an
// editor that shows sub-agents it is a session of its own (own id and journal, announced on the
// parent with SubagentChanged, cancellable alone); otherwise its text and tool calls stream into
// the parent's session. The parent's cancel reaches it; SubagentStart / SubagentStop hooks fire
// around it.
#include <memory>
#include <string>
#include <vector>

#include "runtime/agent/agent_loop.hpp"

namespace runtime {

class SessionManager;

struct SpawnAgentContext {
  AgentLoop* loop = nullptr;
  Session* parent = nullptr;  // the calling session: its agent, mode and remembered answers
  std::shared_ptr<const engine::Engine> engine;
  std::shared_ptr<const hooks::HookSet> hooks;
  std::vector<tools::Tool*> mcp_tools;  // the session's MCP tools (filtered per agent)
  int max_turn_requests = 100;
  std::string base_system_prompt;       // the product's own instructions + environment
  providers::ModelFactory open_model;   // the session manager's
  SessionManager* sessions = nullptr;   // gives the sub-agent a session of its own
};

std::unique_ptr<tools::Tool> make_spawn_agent_tool(SpawnAgentContext context);

}  // namespace runtime
