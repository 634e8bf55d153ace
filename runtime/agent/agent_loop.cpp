#include "runtime/agent/agent_loop.hpp"

#include <spdlog/spdlog.h>

#include "runtime/agent/journal.hpp"
#include "runtime/sessions/prompt_record.hpp"
#include "runtime/agent/steering.hpp"
#include "runtime/providers/model_catalog.hpp"
#include "support/random_id.hpp"

namespace runtime {

namespace {
constexpr int kMaxStopHookContinuations = 8;
constexpr const char* kInterruptedMark = "\n\n[The user interrupted this answer.]";
// The most one answer (text and reasoning) may stream. Models stop far below this (their output
// limits are tens of thousands of tokens); a stream past it is broken or hostile. Like an answer
// that hit the model's own output limit, it is cut there and the turn ends with max_tokens.
constexpr std::size_t kMaxAnswerBytes = 8u << 20;
constexpr const char* kCutOffMark = "\n\n[This answer was cut off: it exceeded the 8 MiB limit for one message.]";

// The longest prefix of `text` within `room` bytes that does not split a UTF-8 character.
std::string_view utf8_prefix(std::string_view text, std::size_t room) {
  if (text.size() <= room) return text;
  while (room > 0 && (static_cast<unsigned char>(text[room]) & 0xC0) == 0x80) --room;
  return text.substr(0, room);
}

Message tool_message(const std::string& call_id, std::string text) {
  Message m;
  m.role = Message::Role::Tool;
  m.tool_call_id = call_id;
  m.text = std::move(text);
  m.is_error = true;
  return m;
}
}  // namespace

// One turn in flight.
struct AgentLoop::Turn {
  Session& session;
  providers::Model& model;
  const TurnSettings& settings;
  support::CancelSource& cancel;
  std::vector<ToolSpec> specs;
  providers::StreamCallbacks callbacks;
  providers::ModelResponse response;
  std::string streamed_text;  // of the request in flight: kept when the user stops it
  std::string streamed_reasoning;
  std::string message_id;  // of the answer in flight: its chunks and its journal record
  support::CancelSource* request = nullptr;  // stops the request in flight (the turn's cancel, or a cut)
  bool answer_cut = false;  // the answer in flight went past kMaxAnswerBytes
  bool stop_hook_active = false;
  int stop_hook_continuations = 0;
};

AgentLoop::AgentLoop(EditorHost& host, boost::asio::thread_pool& pool, std::vector<std::unique_ptr<tools::Tool>> builtins)
    : hooks_(pool, host), router_(hooks_, std::move(builtins)) {}

boost::asio::awaitable<StopReason> AgentLoop::run_turn(Session& session, Message user_message, providers::Model& model,
                                                       const TurnSettings& settings, support::CancelSource& cancel) {
  if (needs_compaction(session, model)) co_await compact(session, model, settings, cancel);
  if (user_message.id.empty()) user_message.id = support::random_id("msg_");
  record(session, sessions::UserMessage{user_message, sessions::prompt_record(settings.prompt)});
  session.conversation.history.push_back(std::move(user_message));
  Turn t{session, model, settings, cancel, router_.specs(settings), {}, {}, {}, {}};
  auto& host = hooks_.host();
  const std::string sid = session.id;
  t.callbacks.on_text = [&host, &t, sid](std::string_view text) {
    text = within_answer_limit(t, text);
    if (text.empty()) return;
    t.streamed_text.append(text);
    host.emit(sid, TextDelta{std::string(text), t.message_id});
  };
  t.callbacks.on_reasoning = [&host, &t, sid](std::string_view text) {
    text = within_answer_limit(t, text);
    if (text.empty()) return;
    t.streamed_reasoning.append(text);
    host.emit(sid, ThoughtDelta{std::string(text), t.message_id});
  };
  // Backpressure: no more of the model's stream is read until the editor has read what we sent.
  t.callbacks.wait_for_consumer = [&host, &t] { return host.wait_for_editor(t.request); };
  t.callbacks.on_retry = [&host, sid](int attempt, int max_attempts, const std::string& why) {
    host.emit(sid, Notice{NoticeSeverity::Warning,
                          "The model request failed, retrying " + std::to_string(attempt) + "/" + std::to_string(max_attempts),
                          why});
  };
  for (int request = 0;; ++request) {
    if (cancel.cancelled()) co_return StopReason::Cancelled;
    if (request >= settings.max_turn_requests) co_return StopReason::MaxTurnRequests;
    if (settings.join_late_tools && settings.join_late_tools()) t.specs = router_.specs(settings);
    join_steered(session);  // what the user steered in meanwhile comes after the tool results
    if (auto stop = co_await ask_model(t)) co_return *stop;
    auto stop = co_await after_answer(t);
    // An answer that ends the turn (not a hook's stop after tool calls) goes on when the user
    // steered a message in meanwhile: the model answers it in this turn.
    const bool answers_steered = stop == StopReason::EndTurn && t.response.tool_calls.empty() && has_steered(session);
    if (stop && !(answers_steered && !cancel.cancelled())) co_return *stop;
  }
}

// One model request: streams the answer and keeps it in the history and the journal.
boost::asio::awaitable<std::optional<StopReason>> AgentLoop::ask_model(Turn& t) {
  Session& session = t.session;
  providers::ModelRequest req{t.model.model().model, t.settings.system_prompt, &session.conversation.history, t.specs,
                              session.settings.reasoning_effort};
  t.streamed_text.clear();
  t.streamed_reasoning.clear();
  t.message_id = support::random_id("msg_");
  t.answer_cut = false;
  support::CancelSource request;
  auto follow_turn = t.cancel.on_cancel([&request] { request.cancel(); });
  t.request = &request;
  try {
    t.response = co_await t.model.stream(req, t.callbacks, &request);
  } catch (const providers::ModelError& e) {
    t.request = nullptr;
    if (t.answer_cut && !t.cancel.cancelled()) co_return cut_answer(t);
    if (e.kind() == providers::ModelError::Kind::Cancelled || t.cancel.cancelled()) {
      keep_partial_answer(t, kInterruptedMark);
      co_return StopReason::Cancelled;
    }
    spdlog::warn("model request failed: {}", e.what());
    throw;
  }
  t.request = nullptr;
  if (t.answer_cut) co_return cut_answer(t);
  auto& r = t.response;
  session.conversation.context_tokens = r.usage.input_tokens + r.usage.output_tokens;
  session.conversation.total_usage += r.usage;
  if (session.conversation.context_tokens > 0) {
    if (!session.conversation.turn_usage) session.conversation.turn_usage.emplace();
    *session.conversation.turn_usage += r.usage;
  }
  const auto spent = cost_of_response(t);
  if (session.conversation.context_tokens > 0) {
    std::optional<Cost> total;
    if (spent) total = Cost{session.conversation.cost[spent->currency], spent->currency};
    hooks_.host().emit(session.id, ContextUsage{session.conversation.context_tokens, context_window(t.model), total});
  }
  Message assistant;
  assistant.role = Message::Role::Assistant;
  assistant.id = t.message_id;
  assistant.text = std::move(r.text);
  assistant.reasoning = std::move(r.reasoning);
  // A response cut off by the token limit may end in half a tool call: never run those.
  if (r.finish != FinishReason::MaxTokens) assistant.tool_calls = std::move(r.tool_calls);
  r.tool_calls = assistant.tool_calls;
  record(session, sessions::AssistantMessage{assistant});
  record(session, sessions::UsageRecord{r.usage, spent});
  session.conversation.history.push_back(std::move(assistant));
  co_return std::nullopt;
}

// What the response just received cost, added to the session's cost; nullopt: the model has no price.
std::optional<Cost> AgentLoop::cost_of_response(Turn& t) {
  const auto& m = t.model.model();
  auto price = m.provider.prices.find(m.model);
  if (price == m.provider.prices.end()) return std::nullopt;
  Cost spent{providers::cost_of(t.response.usage, price->second), price->second.currency};
  t.session.conversation.cost[spent.currency] += spent.amount;
  return spent;
}

// The part of a streamed piece that still fits in the answer; past the limit the request is
// stopped (ask_model then keeps what was shown and ends the turn).
std::string_view AgentLoop::within_answer_limit(Turn& t, std::string_view text) {
  if (t.answer_cut) return {};
  const std::size_t used = t.streamed_text.size() + t.streamed_reasoning.size();
  if (used + text.size() <= kMaxAnswerBytes) return text;
  t.answer_cut = true;
  if (t.request) t.request->cancel();
  return utf8_prefix(text, kMaxAnswerBytes - used);
}

// An answer over kMaxAnswerBytes: what was shown stays, marked; the user is told; the turn ends
// as if the model had hit its output limit, with no tool call run.
StopReason AgentLoop::cut_answer(Turn& t) {
  spdlog::warn("the model's answer went past {} bytes: cut off, the turn ends", kMaxAnswerBytes);
  keep_partial_answer(t, kCutOffMark);
  notify(t.session, {NoticeSeverity::Warning, "The model's answer was cut off",
                     "It exceeded the 8 MiB limit for one message; the turn ended there."});
  return StopReason::MaxTokens;
}

// The answer stopped early (the user stopped it, or it was cut off): what was already shown
// stays in the history and the journal, marked, so the model knows what it said and
// session/load shows it.
void AgentLoop::keep_partial_answer(Turn& t, std::string_view mark) {
  if (t.streamed_text.empty() && t.streamed_reasoning.empty()) return;
  Message partial;
  partial.role = Message::Role::Assistant;
  partial.id = t.message_id;
  partial.text = t.streamed_text + std::string(mark);
  partial.reasoning = t.streamed_reasoning;
  record(t.session, sessions::AssistantMessage{partial});
  t.session.conversation.history.push_back(std::move(partial));
}

// What follows an answer: the end of the turn, the Stop hooks, or the tool calls it asked for.
boost::asio::awaitable<std::optional<StopReason>> AgentLoop::after_answer(Turn& t) {
  if (t.response.finish == FinishReason::MaxTokens) co_return StopReason::MaxTokens;
  if (t.response.finish == FinishReason::Refusal) co_return StopReason::Refusal;
  if (!t.response.tool_calls.empty()) {
    const bool hook_stopped = co_await run_tool_calls(t, t.response.tool_calls);
    if (hook_stopped && !t.cancel.cancelled()) co_return StopReason::EndTurn;  // a hook answered continue: false
    co_return std::nullopt;
  }
  const auto stop_event = t.settings.scope.agent_id ? hooks::HookEvent::SubagentStop : hooks::HookEvent::Stop;
  if (!t.settings.hooks || !t.settings.hooks->has(stop_event) || t.cancel.cancelled() ||
      t.stop_hook_continuations >= kMaxStopHookContinuations)
    co_return t.cancel.cancelled() ? StopReason::Cancelled : StopReason::EndTurn;
  hooks::HookInput input = hook_input(t.session, t.settings.scope);
  input.stop_hook_active = t.stop_hook_active;
  input.last_assistant_message = t.session.conversation.history.back().text;
  auto stop = co_await hooks_.fire(t.session, t.settings.hooks, stop_event, std::move(input), &t.cancel);
  if (t.cancel.cancelled()) co_return StopReason::Cancelled;
  if (!stop.blocked || stop.stop_turn) co_return StopReason::EndTurn;
  // A Stop hook objected: keep going with its reason as the next instruction.
  t.stop_hook_active = true;
  ++t.stop_hook_continuations;
  Message nudge;
  nudge.role = Message::Role::User;
  nudge.id = support::random_id("msg_");
  nudge.text = "A Stop hook asked you to continue: " + (stop.reason.empty() ? std::string("(no reason given)") : stop.reason);
  for (const auto& c : stop.additional_context) nudge.text += "\n\n" + c;
  record(t.session, sessions::UserMessage{nudge, {}});
  t.session.conversation.history.push_back(std::move(nudge));
  co_return std::nullopt;
}

// Runs the calls in order; returns whether a hook asked to end the turn.
boost::asio::awaitable<bool> AgentLoop::run_tool_calls(Turn& t, const std::vector<ToolCall>& calls) {
  bool stop_turn = false;
  for (const auto& call : calls) {
    if (t.cancel.cancelled()) {
      // Every call needs an answer in the history, or the next request is malformed.
      auto skipped = tool_message(call.id, "Cancelled by the user.");
      record(t.session, sessions::ToolResult{skipped});
      t.session.conversation.history.push_back(std::move(skipped));
      continue;
    }
    auto outcome = co_await router_.dispatch(t.session, call, t.settings, t.cancel);
    t.session.conversation.history.push_back(std::move(outcome.result));
    stop_turn = stop_turn || outcome.stop_turn;
  }
  co_return stop_turn;
}

}  // namespace runtime
