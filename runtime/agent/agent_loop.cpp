#include "runtime/agent/agent_loop.hpp"

#include <spdlog/spdlog.h>

#include "acp/rpc_error.hpp"

namespace runtime {

namespace json = boost::json;
using tools::Authorization;
using tools::Permission;

AgentLoop::AgentLoop(acp::ClientApi& client, boost::asio::thread_pool& pool,
                     std::vector<std::unique_ptr<tools::Tool>> tools)
    : client_(client), pool_(pool), tools_(std::move(tools)) {}

std::vector<ToolSpec> AgentLoop::tool_specs() const {
  std::vector<ToolSpec> out;
  for (const auto& t : tools_) out.push_back(t->spec());
  return out;
}

void AgentLoop::send(Session& session, json::object update) { client_.session_update(session.id, std::move(update)); }

// Everything one tool call needs: the session, the editor, cancellation, and the permission
// policy of the session's mode.
class AgentLoop::CallContext : public tools::ToolContext {
 public:
  CallContext(AgentLoop& loop, Session& session, acp::CancelSource& cancel, const ToolCall& call,
              const tools::ToolDescription& desc, const std::string& tool_name)
      : loop_(loop), session_(session), cancel_(cancel), call_(call), desc_(desc), tool_name_(tool_name) {}

  Session& session() override { return session_; }
  acp::ClientApi& client() override { return loop_.client_; }
  acp::CancelSource& cancel() override { return cancel_; }
  boost::asio::thread_pool& blocking_pool() override { return loop_.pool_; }
  const std::string& tool_call_id() override { return call_.id; }

  void update(json::object fields) override {
    fields["sessionUpdate"] = "tool_call_update";
    fields["toolCallId"] = call_.id;
    loop_.send(session_, std::move(fields));
  }

  boost::asio::awaitable<Authorization> authorize(Permission p, json::array preview) override {
    auto decision = co_await decide(p, std::move(preview));
    if (decision == Authorization::Allowed) update(json::object{{"status", "in_progress"}});
    co_return decision;
  }

 private:
  boost::asio::awaitable<Authorization> decide(Permission p, json::array preview) {
    if (p == Permission::None) co_return Authorization::Allowed;
    switch (session_.mode) {
      case Mode::ReadOnly: co_return Authorization::Rejected;
      case Mode::FullAuto: co_return Authorization::Allowed;
      case Mode::AcceptEdits:
        if (p == Permission::Edit) co_return Authorization::Allowed;
        break;
      case Mode::Default: break;
    }
    if (auto it = session_.remembered_permissions.find(tool_name_); it != session_.remembered_permissions.end())
      co_return it->second ? Authorization::Allowed : Authorization::Rejected;

    json::object tool_call{{"toolCallId", call_.id}, {"title", desc_.title}, {"kind", desc_.kind},
                           {"status", "pending"}, {"locations", desc_.locations}};
    if (!preview.empty()) tool_call["content"] = std::move(preview);
    json::error_code ec;
    auto raw = json::parse(call_.arguments, ec);
    if (!ec) tool_call["rawInput"] = std::move(raw);
    const std::string what = p == Permission::Edit ? "edits" : "commands";
    std::vector<acp::PermissionOption> options{
        {"allow_once", "Allow", "allow_once"},
        {"allow_always", "Always allow " + tool_name_, "allow_always"},
        {"reject_once", "Reject", "reject_once"},
        {"reject_always", "Always reject " + tool_name_, "reject_always"},
    };
    std::optional<std::string> choice;
    try {
      choice = co_await loop_.client_.request_permission(session_.id, std::move(tool_call), options, &cancel_);
    } catch (const acp::RpcError& e) {
      spdlog::warn("permission request failed: {}", e.what());
      co_return cancel_.cancelled() ? Authorization::Cancelled : Authorization::Rejected;
    }
    if (!choice || cancel_.cancelled()) co_return Authorization::Cancelled;
    if (*choice == "allow_always") session_.remembered_permissions[tool_name_] = true;
    if (*choice == "reject_always") session_.remembered_permissions[tool_name_] = false;
    co_return (*choice == "allow_once" || *choice == "allow_always") ? Authorization::Allowed : Authorization::Rejected;
  }

  AgentLoop& loop_;
  Session& session_;
  acp::CancelSource& cancel_;
  const ToolCall& call_;
  const tools::ToolDescription& desc_;
  std::string tool_name_;
};

boost::asio::awaitable<Message> AgentLoop::run_tool_call(Session& session, const ToolCall& call, acp::CancelSource& cancel) {
  Message result;
  result.role = Message::Role::Tool;
  result.tool_call_id = call.id;

  tools::Tool* tool = nullptr;
  for (auto& t : tools_)
    if (t->name() == call.name) tool = t.get();
  json::error_code ec;
  auto args_value = json::parse(call.arguments.empty() ? "{}" : call.arguments, ec);
  const bool args_ok = !ec && args_value.is_object();
  const json::object args = args_ok ? args_value.as_object() : json::object{};

  tools::ToolDescription desc;
  if (tool) desc = tool->describe(args, session);
  else desc.title = call.name;
  json::object announce{{"sessionUpdate", "tool_call"}, {"toolCallId", call.id}, {"title", desc.title},
                        {"kind", desc.kind},           {"status", "pending"},     {"locations", desc.locations}};
  if (args_ok) announce["rawInput"] = args;
  send(session, std::move(announce));

  tools::ToolResult outcome;
  if (!tool) {
    outcome = tools::error_result("There is no tool named '" + call.name + "'.");
  } else if (!args_ok) {
    outcome = tools::error_result("The arguments of " + call.name + " are not a JSON object: " + call.arguments);
  } else {
    CallContext ctx(*this, session, cancel, call, desc, tool->name());
    try {
      outcome = co_await tool->run(ctx, args);
    } catch (const tools::ToolCancelled&) {
      outcome = tools::error_result("Cancelled by the user.");
    } catch (const std::exception& e) {
      spdlog::error("tool {} failed: {}", call.name, e.what());
      outcome = tools::error_result(std::string("The tool failed: ") + e.what());
    }
  }
  json::object done{{"sessionUpdate", "tool_call_update"},
                    {"toolCallId", call.id},
                    {"status", outcome.is_error ? "failed" : "completed"},
                    {"content", outcome.content}};
  if (!outcome.raw_output.is_null()) done["rawOutput"] = outcome.raw_output;
  send(session, std::move(done));
  result.text = std::move(outcome.text);
  result.is_error = outcome.is_error;
  co_return result;
}

boost::asio::awaitable<std::string> AgentLoop::run_turn(Session& session, Message user_message,
                                                        providers::ModelClient& model, const TurnSettings& settings,
                                                        acp::CancelSource& cancel) {
  session.history.push_back(std::move(user_message));
  providers::StreamCallbacks callbacks{
      [&](std::string_view text) {
        send(session, json::object{{"sessionUpdate", "agent_message_chunk"},
                                   {"content", json::object{{"type", "text"}, {"text", text}}}});
      },
      [&](std::string_view text) {
        send(session, json::object{{"sessionUpdate", "agent_thought_chunk"},
                                   {"content", json::object{{"type", "text"}, {"text", text}}}});
      },
      nullptr};
  const auto specs = tool_specs();

  for (int request = 0;; ++request) {
    if (cancel.cancelled()) co_return "cancelled";
    if (request >= settings.max_turn_requests) co_return "max_turn_requests";
    providers::ModelRequest req{model.model().model, settings.system_prompt, &session.history, specs};
    providers::ModelResponse response;
    try {
      response = co_await model.stream(req, callbacks, &cancel);
    } catch (const providers::ModelError& e) {
      if (e.kind() == providers::ModelError::Kind::Cancelled || cancel.cancelled()) co_return "cancelled";
      spdlog::warn("model request failed: {}", e.what());
      throw acp::RpcError(e.kind() == providers::ModelError::Kind::Auth ? acp::error_code::kAuthRequired
                                                                        : acp::error_code::kInternalError,
                          e.what());
    }
    Message assistant;
    assistant.role = Message::Role::Assistant;
    assistant.text = std::move(response.text);
    assistant.reasoning = std::move(response.reasoning);
    // A response cut off by the token limit may end in half a tool call: never run those.
    if (response.finish != FinishReason::MaxTokens) assistant.tool_calls = std::move(response.tool_calls);
    const auto calls = assistant.tool_calls;
    session.history.push_back(std::move(assistant));

    if (response.finish == FinishReason::MaxTokens) co_return "max_tokens";
    if (response.finish == FinishReason::Refusal) co_return "refusal";
    if (calls.empty()) co_return "end_turn";
    for (const auto& call : calls) {
      if (cancel.cancelled()) {
        // Every call needs an answer in the history, or the next request is malformed.
        Message skipped;
        skipped.role = Message::Role::Tool;
        skipped.tool_call_id = call.id;
        skipped.text = "Cancelled by the user.";
        skipped.is_error = true;
        session.history.push_back(std::move(skipped));
        continue;
      }
      session.history.push_back(co_await run_tool_call(session, call, cancel));
    }
  }
}

}  // namespace runtime
