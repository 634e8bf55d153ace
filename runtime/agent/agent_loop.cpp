#include "runtime/agent/agent_loop.hpp"

#include <spdlog/spdlog.h>

#include "acp/params.hpp"
#include "acp/rpc_error.hpp"
#include "runtime/hooks/hooks_async.hpp"

namespace runtime {

namespace json = boost::json;
using tools::Authorization;
using tools::Permission;

AgentLoop::AgentLoop(acp::ClientApi& client, boost::asio::thread_pool& pool,
                     std::vector<std::unique_ptr<tools::Tool>> tools)
    : client_(client), pool_(pool), tools_(std::move(tools)) {}

std::vector<ToolSpec> AgentLoop::tool_specs(const TurnSettings& settings) const {
  std::vector<ToolSpec> out;
  for (const auto& t : tools_) out.push_back(t->spec());
  for (auto* t : settings.extra_tools) out.push_back(t->spec());
  return out;
}

tools::Tool* AgentLoop::find_tool(const std::string& name, const TurnSettings& settings) const {
  for (const auto& t : tools_)
    if (t->name() == name) return t.get();
  for (auto* t : settings.extra_tools)
    if (t->name() == name) return t;
  return nullptr;
}

void AgentLoop::notify_user(Session& session, const std::string& text) {
  send(session, json::object{{"sessionUpdate", "agent_message_chunk"},
                             {"content", json::object{{"type", "text"}, {"text", "\n\n> " + text + "\n\n"}}}});
}

void AgentLoop::report_hook_outcome(Session& session, const hooks::HookOutcome& outcome) {
  for (const auto& m : outcome.system_messages) notify_user(session, m);
  for (const auto& e : outcome.errors) notify_user(session, "Hook error: " + e.to_string());
}

// AGENTS.md files between the session's folder and a deeper file the agent just read join the
// context once, right after the read.
std::string AgentLoop::agents_md_after_read(Session& session, const json::object& args) {
  auto path = acp::str_at(args, "path");
  if (path.empty()) return {};
  auto files = engine::agents_md_for_read(session.view, std::string(path), session.agents_md_included);
  if (files.empty()) return {};
  for (const auto& f : files) session.agents_md_included.insert(f.path);
  return "\n\n" + engine::agents_md_prompt(files);
}

void AgentLoop::send(Session& session, json::object update) { client_.session_update(session.id, std::move(update)); }

void AgentLoop::record(Session& session, sessions::RecordBody body) {
  if (!session.log) return;
  try {
    session.log->append(std::move(body));
  } catch (const std::exception& e) {
    spdlog::error("session {}: cannot write the session log: {}", session.id, e.what());
  }
}

namespace {
// What every hook of a turn is told about where it runs.
hooks::HookInput turn_hook_input(const Session& session, const TurnSettings& settings) {
  hooks::HookInput input;
  input.session_id = session.id;
  input.turn_id = settings.turn_id;
  input.cwd = session.cwd;
  input.agent_id = settings.agent_id;
  input.agent_type = settings.agent_type;
  return input;
}

// The editor's view of a tool call, for the session log (replayed by session/load).
sessions::ToolCallState tool_call_state(const json::object& update) {
  sessions::ToolCallState st;
  st.tool_call_id = std::string(acp::str_at(update, "toolCallId"));
  if (auto* v = update.if_contains("title"); v && v->is_string()) st.title = std::string(v->as_string());
  if (auto* v = update.if_contains("kind"); v && v->is_string()) st.kind = std::string(v->as_string());
  if (auto* v = update.if_contains("status"); v && v->is_string()) st.status = std::string(v->as_string());
  if (auto* v = acp::arr_at(update, "locations")) st.locations = *v;
  if (auto* v = update.if_contains("rawInput")) st.raw_input = *v;
  if (auto* v = update.if_contains("rawOutput")) st.raw_output = *v;
  if (auto* v = acp::arr_at(update, "content")) st.content = *v;
  return st;
}
}  // namespace

// Everything one tool call needs: the session, the editor, cancellation, and the permission
// policy of the session's mode.
class AgentLoop::CallContext : public tools::ToolContext {
 public:
  CallContext(AgentLoop& loop, Session& session, acp::CancelSource& cancel, const ToolCall& call,
              const tools::ToolDescription& desc, const std::string& tool_name, bool pre_approved)
      : loop_(loop), session_(session), cancel_(cancel), call_(call), desc_(desc), tool_name_(tool_name),
        pre_approved_(pre_approved) {}

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

  void show_plan(json::array entries) override {
    loop_.record(session_, sessions::PlanUpdate{entries});
    loop_.send(session_, json::object{{"sessionUpdate", "plan"}, {"entries", std::move(entries)}});
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
    if (pre_approved_) co_return Authorization::Allowed;  // a PreToolUse hook answered "allow"
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
  bool pre_approved_;
};

boost::asio::awaitable<AgentLoop::ToolCallOutcome> AgentLoop::run_tool_call(Session& session, const ToolCall& call,
                                                                          const TurnSettings& settings,
                                                                          acp::CancelSource& cancel) {
  ToolCallOutcome out;
  out.result.role = Message::Role::Tool;
  out.result.tool_call_id = call.id;

  tools::Tool* tool = find_tool(call.name, settings);
  json::error_code ec;
  auto args_value = json::parse(call.arguments.empty() ? "{}" : call.arguments, ec);
  const bool args_ok = !ec && args_value.is_object();
  json::object args = args_ok ? args_value.as_object() : json::object{};

  tools::ToolDescription desc;
  if (tool) desc = tool->describe(args, session);
  else desc.title = call.name;
  json::object announce{{"sessionUpdate", "tool_call"}, {"toolCallId", call.id}, {"title", desc.title},
                        {"kind", desc.kind},           {"status", "pending"},     {"locations", desc.locations}};
  if (args_ok) announce["rawInput"] = args;
  record(session, tool_call_state(announce));
  send(session, std::move(announce));

  hooks::HookInput hook_input = turn_hook_input(session, settings);
  hook_input.tool_name = call.name;
  hook_input.tool_use_id = call.id;

  tools::ToolResult outcome;
  std::vector<std::string> notes;  // shown in the editor's tool call: what hooks did
  std::string model_context;      // appended to the result the model sees
  bool pre_approved = false;
  bool blocked = false;
  if (tool && args_ok && settings.hooks && settings.hooks->has(hooks::HookEvent::PreToolUse)) {
    hook_input.tool_input = args;
    auto input = hook_input;
    auto pre = co_await hooks::run_hooks_async(pool_, settings.hooks, hooks::HookEvent::PreToolUse, std::move(input), &cancel);
    report_hook_outcome(session, pre);
    const std::string by = pre.decided_by_label ? " (" + *pre.decided_by_label + ")" : "";
    if (pre.blocked || pre.permission == hooks::PermissionDecision::Deny) {
      blocked = true;
      std::string reason = pre.blocked ? pre.reason : pre.permission_reason;
      if (reason.empty()) reason = "no reason given";
      outcome = tools::error_result("Blocked by a PreToolUse hook" + by + ": " + reason);
    } else {
      if (pre.updated_input && pre.updated_input->is_object()) {
        args = pre.updated_input->as_object();
        notes.push_back("Input rewritten by a PreToolUse hook" + by + ".");
        json::object rewritten{{"sessionUpdate", "tool_call_update"}, {"toolCallId", call.id}, {"rawInput", args}};
        auto new_desc = tool->describe(args, session);
        rewritten["title"] = new_desc.title;
        rewritten["locations"] = new_desc.locations;
        rewritten["content"] = json::array{tools::text_content(notes.back())};
        desc = std::move(new_desc);
        send(session, std::move(rewritten));
      }
      pre_approved = pre.permission == hooks::PermissionDecision::Allow;
    }
    for (const auto& c : pre.additional_context) model_context += "\n\n" + c;
    out.stop_turn = pre.stop_turn;
  }

  if (blocked) {
    // outcome already says why
  } else if (!tool) {
    outcome = tools::error_result("There is no tool named '" + call.name + "'.");
  } else if (!args_ok) {
    outcome = tools::error_result("The arguments of " + call.name + " are not a JSON object: " + call.arguments);
  } else if (cancel.cancelled()) {
    outcome = tools::error_result("Cancelled by the user.");
  } else {
    CallContext ctx(*this, session, cancel, call, desc, tool->name(), pre_approved);
    try {
      outcome = co_await tool->run(ctx, args);
    } catch (const tools::ToolCancelled&) {
      outcome = tools::error_result("Cancelled by the user.");
    } catch (const std::exception& e) {
      spdlog::error("tool {} failed: {}", call.name, e.what());
      outcome = tools::error_result(std::string("The tool failed: ") + e.what());
    }
    if (!outcome.is_error && tool->name() == "read_file") model_context += agents_md_after_read(session, args);

    if (settings.hooks && settings.hooks->has(hooks::HookEvent::PostToolUse) && !cancel.cancelled()) {
      hook_input.tool_input = args;
      hook_input.tool_response = json::object{{"output", outcome.text}, {"is_error", outcome.is_error}};
      auto input = hook_input;
      auto post = co_await hooks::run_hooks_async(pool_, settings.hooks, hooks::HookEvent::PostToolUse, std::move(input), &cancel);
      report_hook_outcome(session, post);
      if (post.blocked) {
        const std::string by = post.decided_by_label ? " (" + *post.decided_by_label + ")" : "";
        model_context += "\n\nA PostToolUse hook" + by + " objected: " + post.reason;
        notes.push_back("A PostToolUse hook" + by + " objected: " + post.reason);
      }
      for (const auto& c : post.additional_context) model_context += "\n\n" + c;
      out.stop_turn = out.stop_turn || post.stop_turn;
    }
  }
  json::array content;
  for (const auto& n : notes) content.push_back(tools::text_content(n));
  for (auto& c : outcome.content) content.push_back(std::move(c));
  json::object done{{"sessionUpdate", "tool_call_update"},
                    {"toolCallId", call.id},
                    {"status", outcome.is_error ? "failed" : "completed"},
                    {"content", std::move(content)}};
  if (!outcome.raw_output.is_null()) done["rawOutput"] = outcome.raw_output;
  auto final_state = tool_call_state(done);
  if (!desc.title.empty()) final_state.title = desc.title;
  record(session, std::move(final_state));
  send(session, std::move(done));
  out.result.text = std::move(outcome.text) + model_context;
  out.result.is_error = outcome.is_error;
  record(session, sessions::ToolResult{out.result});
  co_return out;
}

std::int64_t AgentLoop::context_window(const providers::ModelClient& model) {
  return model.model().provider.context_window.value_or(128000);
}

bool AgentLoop::needs_compaction(const Session& session, const providers::ModelClient& model) {
  return session.context_tokens > context_window(model) * 8 / 10 && session.history.size() >= 2;
}

boost::asio::awaitable<bool> AgentLoop::compact(Session& session, providers::ModelClient& model,
                                                const TurnSettings& settings, acp::CancelSource& cancel) {
  if (session.history.empty()) co_return false;
  notify_user(session, "Compacting the conversation: the model is summarising it to free context.");
  std::vector<Message> request_history = session.history;
  Message ask;
  ask.role = Message::Role::User;
  ask.text =
      "Summarise this conversation so far so that you can continue the work from the summary alone: the user's "
      "goals and instructions, decisions made, files read and changed (with paths), commands run and their "
      "outcomes, and what remains to do. Be complete but concise. Answer with the summary only.";
  request_history.push_back(std::move(ask));
  providers::ModelRequest req{model.model().model, settings.system_prompt, &request_history, {}};
  providers::StreamCallbacks silent{[](std::string_view) {}, [](std::string_view) {}, nullptr};
  providers::ModelResponse response;
  try {
    response = co_await model.stream(req, silent, &cancel);
  } catch (const providers::ModelError& e) {
    if (!cancel.cancelled()) notify_user(session, std::string("Compaction failed, the conversation is unchanged: ") + e.what());
    co_return false;
  }
  if (response.text.empty()) co_return false;
  Message summary;
  summary.role = Message::Role::User;
  summary.text = "This conversation was compacted. Summary of everything before this point:\n\n" + response.text;
  // Deeper AGENTS.md files entered the context with reads; they would be lost with those reads.
  std::vector<engine::AgentsMdFile> deeper;
  for (const auto& path : session.agents_md_included) {
    bool in_chain = false;
    for (const auto& f : session.view.agents_md) in_chain = in_chain || f.path == path;
    if (in_chain) continue;
    auto files = engine::agents_md_for_read(session.view, path, {});
    for (auto& f : files)
      if (f.path == path) deeper.push_back(std::move(f));
  }
  if (!deeper.empty()) summary.text += "\n\n" + engine::agents_md_prompt(deeper);
  const auto before = session.history.size();
  session.history.clear();
  record(session, sessions::Compaction{response.text, {summary}, 0});
  session.history.push_back(std::move(summary));
  session.context_tokens = response.usage.output_tokens;
  notify_user(session, "Compacted " + std::to_string(before) + " messages into a summary.");
  co_return true;
}

boost::asio::awaitable<std::string> AgentLoop::run_turn(Session& session, Message user_message,
                                                        providers::ModelClient& model, const TurnSettings& settings,
                                                        acp::CancelSource& cancel) {
  if (needs_compaction(session, model)) co_await compact(session, model, settings, cancel);
  record(session, sessions::UserMessage{user_message, settings.prompt_blocks});
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
  const auto specs = tool_specs(settings);
  bool stop_hook_active = false;
  int stop_hook_continuations = 0;
  constexpr int kMaxStopHookContinuations = 8;

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
    session.context_tokens = response.usage.input_tokens + response.usage.output_tokens;
    session.total_usage.input_tokens += response.usage.input_tokens;
    session.total_usage.output_tokens += response.usage.output_tokens;
    if (session.context_tokens > 0)
      send(session, json::object{{"sessionUpdate", "usage_update"},
                                 {"used", session.context_tokens},
                                 {"size", context_window(model)}});
    Message assistant;
    assistant.role = Message::Role::Assistant;
    assistant.text = std::move(response.text);
    assistant.reasoning = std::move(response.reasoning);
    // A response cut off by the token limit may end in half a tool call: never run those.
    if (response.finish != FinishReason::MaxTokens) assistant.tool_calls = std::move(response.tool_calls);
    const auto calls = assistant.tool_calls;
    record(session, sessions::AssistantMessage{assistant});
    record(session, sessions::UsageRecord{response.usage});
    session.history.push_back(std::move(assistant));

    if (response.finish == FinishReason::MaxTokens) co_return "max_tokens";
    if (response.finish == FinishReason::Refusal) co_return "refusal";
    if (calls.empty()) {
      const auto stop_event = settings.agent_id ? hooks::HookEvent::SubagentStop : hooks::HookEvent::Stop;
      if (!settings.hooks || !settings.hooks->has(stop_event) || cancel.cancelled() ||
          stop_hook_continuations >= kMaxStopHookContinuations)
        co_return cancel.cancelled() ? "cancelled" : "end_turn";
      hooks::HookInput input = turn_hook_input(session, settings);
      input.stop_hook_active = stop_hook_active;
      input.last_assistant_message = session.history.back().text;
      auto stop = co_await hooks::run_hooks_async(pool_, settings.hooks, stop_event, std::move(input), &cancel);
      report_hook_outcome(session, stop);
      if (cancel.cancelled()) co_return "cancelled";
      if (!stop.blocked || stop.stop_turn) co_return "end_turn";
      // A Stop hook objected: keep going with its reason as the next instruction.
      stop_hook_active = true;
      ++stop_hook_continuations;
      Message nudge;
      nudge.role = Message::Role::User;
      nudge.text = "A Stop hook asked you to continue: " + (stop.reason.empty() ? std::string("(no reason given)") : stop.reason);
      for (const auto& c : stop.additional_context) nudge.text += "\n\n" + c;
      record(session, sessions::UserMessage{nudge, {}});
      session.history.push_back(std::move(nudge));
      continue;
    }
    bool stop_turn = false;
    for (const auto& call : calls) {
      if (cancel.cancelled()) {
        // Every call needs an answer in the history, or the next request is malformed.
        Message skipped;
        skipped.role = Message::Role::Tool;
        skipped.tool_call_id = call.id;
        skipped.text = "Cancelled by the user.";
        skipped.is_error = true;
        record(session, sessions::ToolResult{skipped});
        session.history.push_back(std::move(skipped));
        continue;
      }
      auto outcome = co_await run_tool_call(session, call, settings, cancel);
      session.history.push_back(std::move(outcome.result));
      stop_turn = stop_turn || outcome.stop_turn;
    }
    if (stop_turn && !cancel.cancelled()) co_return "end_turn";  // a hook answered continue: false
  }
}

}  // namespace runtime
