#include "runtime/agent/spawn_agent_tool.hpp"

#include <spdlog/spdlog.h>

#include "runtime/agent/journal.hpp"
#include "runtime/agent/session_manager.hpp"
#include "support/json_read.hpp"

namespace runtime {

namespace json = boost::json;

namespace {

class SpawnAgentTool : public tools::Tool {
 public:
  explicit SpawnAgentTool(SpawnAgentContext c) : c_(std::move(c)) {}

  std::string name() const override { return "spawn_agent"; }

  ToolSpec spec() const override {
    std::string agents;
    for (const auto& [n, a] : c_.engine->agents()) agents += (agents.empty() ? "" : ", ") + n;
    return {name(),
            "Hand a self-contained task to a sub-agent, which works on it in its own conversation with its own "
            "tools and answers with a report. Use it for independent research or changes whose details the main "
            "conversation does not need. Available agents: " + agents + ".",
            json::object{{"type", "object"},
                         {"properties",
                          json::object{{"prompt", json::object{{"type", "string"}, {"description", "The task, complete and self-contained"}}},
                                       {"agent", json::object{{"type", "string"}, {"description", "Agent name (default: this session's agent)"}}}}},
                         {"required", json::array{"prompt"}}}};
  }

  tools::ToolDescription describe(const json::object& args, const ToolEnv&) const override {
    tools::ToolDescription d;
    d.kind = ToolKind::Other;
    std::string agent(support::str_at(args, "agent", c_.parent->settings.agent_name));
    std::string prompt(support::str_at(args, "prompt"));
    if (auto nl = prompt.find('\n'); nl != std::string::npos) prompt = prompt.substr(0, nl) + " …";
    if (prompt.size() > 100) prompt = prompt.substr(0, 100) + "…";
    d.title = "Agent " + agent + ": " + prompt;
    return d;
  }

  // A call without a prompt or for an unknown agent ends before it is marked in progress.
  boost::asio::awaitable<tools::ApprovalRequest> approval(tools::ToolContext&, const json::object& args) override {
    tools::ApprovalRequest request;
    const std::string agent_name(support::str_at(args, "agent", c_.parent->settings.agent_name));
    if (support::str_at(args, "prompt").empty()) request.refusal = tools::error_result("spawn_agent needs a 'prompt'.");
    else if (!c_.engine->find_agent(agent_name))
      request.refusal = tools::error_result("There is no agent named '" + agent_name + "'.");
    co_return request;
  }

  boost::asio::awaitable<tools::ToolResult> run(tools::ToolContext& ctx, const json::object& args) override {
    Session& parent = *c_.parent;
    std::string prompt(support::str_at(args, "prompt"));
    std::string agent_name(support::str_at(args, "agent", parent.settings.agent_name));
    const engine::Agent* agent = c_.engine->find_agent(agent_name);
    if (!agent) co_return tools::error_result("There is no agent named '" + agent_name + "'.");

    // Without a session of its own the sub-conversation reports into the parent's session (same
    // id): the editor shows its messages and tool calls as progress of this call, and it keeps no
    // journal of its own.
    Session child = Session::child_of(parent, c_.engine, agent_name);
    const std::string agent_id = ctx.tool_call_id();
    // SubagentStart and SubagentStop carry the same turn id, so a script can pair them.
    const TurnScope scope{parent.id + "-" + agent_id, agent_id, agent_name};
    Message first = co_await first_message(parent, prompt, scope, ctx.cancel());
    std::unique_ptr<providers::Model> model;
    try {
      model = c_.open_model(providers::resolve_model(c_.engine->main_config(), agent->model));
    } catch (const providers::ModelError& e) {
      co_return tools::error_result(std::string("The sub-agent has no usable model: ") + e.what());
    }
    TurnSettings settings = turn_settings(child, *agent, prompt, scope);
    // The parent's cancel stops the sub-agent; with a session of its own, so does its own.
    auto cancel = std::make_shared<support::CancelSource>();
    auto follow_parent = ctx.cancel().on_cancel([cancel] { cancel->cancel(); });
    const bool own_session = c_.sessions && c_.loop->host().shows_subagents();
    if (!own_session) child.shown_in = Session::ShownIn{&parent, agent_id};  // replayed as shown
    if (own_session) start_own_session(child, parent, cancel, agent_id, prompt);
    ChildEnd end;
    try {
      end.stop_reason = co_await c_.loop->run_turn(child, std::move(first), *model, settings, *cancel);
    } catch (const providers::ModelError& e) {
      end.failure = e.what();
    } catch (...) {
      end.unexpected = std::current_exception();
      end.failure = "internal error";
    }
    if (own_session) end_own_session(child, parent, end);
    if (end.unexpected) std::rethrow_exception(end.unexpected);
    if (!end.failure.empty()) co_return tools::error_result("The sub-agent failed: " + end.failure);
    // What the user allowed for good inside the sub-agent holds for the session.
    for (const auto& [key, allowed] : child.remembered_permissions) remember_answer(parent, {key}, allowed);
    if (end.stop_reason == StopReason::Cancelled) {
      if (ctx.cancel().cancelled()) throw tools::ToolCancelled();
      co_return tools::error_result("The user stopped the " + agent_name + " agent before it finished.");
    }
    co_return report(child, agent_name, end.stop_reason);
  }

 private:
  // How the sub-agent's turn ended.
  struct ChildEnd {
    StopReason stop_reason = StopReason::EndTurn;
    std::string failure;  // the model failed (or an internal error): the call's error
    std::exception_ptr unexpected;
  };

  // The task, with what SubagentStart hooks add to it.
  boost::asio::awaitable<Message> first_message(Session& parent, const std::string& prompt, const TurnScope& scope,
                                                support::CancelSource& cancel) {
    Message first;
    first.role = Message::Role::User;
    first.text = prompt;
    if (c_.hooks && c_.hooks->has(hooks::HookEvent::SubagentStart)) {
      auto input = hook_input(parent, scope);
      auto start = co_await c_.loop->hooks().fire(parent, c_.hooks, hooks::HookEvent::SubagentStart, std::move(input), &cancel);
      for (const auto& extra : start.additional_context) first.text += "\n\n<context>\n" + extra + "\n</context>";
    }
    co_return first;
  }

  // Its instructions, skills and the MCP tools its agent selects.
  TurnSettings turn_settings(const Session& child, const engine::Agent& agent, const std::string& prompt,
                             const TurnScope& scope) const {
    TurnSettings settings;
    settings.max_turn_requests = c_.max_turn_requests;
    settings.system_prompt = c_.base_system_prompt;
    if (auto block = child.services.view.system_prompt_block(); !block.empty()) settings.system_prompt += "\n" + block;
    settings.scope = scope;
    settings.hooks = c_.hooks;
    settings.prompt.parts.push_back(UserPrompt::Text{prompt});  // its journal's title
    settings.extra_tools = ToolRouter::for_turn(c_.mcp_tools, agent.mcp_servers);
    return settings;
  }

  void start_own_session(Session& child, Session& parent, support::CancelSourcePtr cancel, const std::string& agent_id,
                         const std::string& prompt) {
    c_.sessions->start_child(child, parent, std::move(cancel));
    SubagentChanged hello;
    hello.session_id = child.id;
    hello.title = child.settings.agent_name;
    hello.description = prompt;
    hello.cwd = child.settings.cwd.string();
    hello.tool_call_id = agent_id;
    hello.cancellable = true;
    hello.state = SubagentChanged::State::Running;
    tell_parent(parent, std::move(hello));  // before anything of the child's own
  }

  void end_own_session(Session& child, Session& parent, const ChildEnd& end) {
    SubagentChanged done;
    done.session_id = child.id;
    done.state = SubagentChanged::State::Idle;
    done.stop_reason = end.failure.empty() ? stop_reason_name(end.stop_reason) : "error";
    done.error = end.failure;
    c_.sessions->end_child(child, done.stop_reason.c_str());
    tell_parent(parent, std::move(done));  // after everything of the child's own
  }

  // Its last answer is the call's result.
  static tools::ToolResult report(const Session& child, const std::string& agent_name, StopReason stop_reason) {
    std::string answer;
    for (auto it = child.conversation.history.rbegin(); it != child.conversation.history.rend(); ++it)
      if (it->role == Message::Role::Assistant && !it->text.empty()) {
        answer = it->text;
        break;
      }
    tools::ToolResult r;
    r.text = "The " + agent_name + " agent finished (" + stop_reason_name(stop_reason) + ")" +
             (answer.empty() ? " without a report." : ":\n\n" + answer);
    r.is_error = stop_reason != StopReason::EndTurn;
    r.content.push_back(TextContent{answer.empty() ? "(no report)" : answer});
    return r;
  }

  // Journaled too: session/load of the parent shows its sub-agent sessions again.
  void tell_parent(Session& parent, SubagentChanged change) {
    record(parent, sessions::SubagentRecord{change});
    c_.loop->host().emit(parent.id, std::move(change));
  }

  SpawnAgentContext c_;
};

}  // namespace

std::unique_ptr<tools::Tool> make_spawn_agent_tool(SpawnAgentContext context) {
  return std::make_unique<SpawnAgentTool>(std::move(context));
}

}  // namespace runtime
