#include "runtime/agent/steering.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <exception>
#include <utility>
#include <spdlog/spdlog.h>

#include "runtime/agent/agent_error.hpp"
#include "runtime/agent/agent_loop.hpp"
#include "runtime/agent/journal.hpp"
#include "runtime/agent/task.hpp"
#include "runtime/sessions/prompt_record.hpp"
#include "support/one_shot_event.hpp"
#include "support/random_id.hpp"

namespace runtime {

const char* steer_outcome_name(SteerOutcome o) {
  switch (o) {
    case SteerOutcome::Injected: return "injected";
    case SteerOutcome::StartedNewTurn: return "startedNewTurn";
    case SteerOutcome::PromptRequired: return "promptRequired";
    case SteerOutcome::Blocked: return "failed";
  }
  return "failed";
}

namespace {
// The steered message in the chat, as the user's, with the id the journal keeps for it.
void show_user_message(EditorHost& host, const std::string& session_id, const boost::json::array& blocks,
                       const std::string& message_id) {
  for (const auto& block : blocks)
    if (block.is_object()) host.emit(session_id, UserContent{block.as_object(), message_id});
}
}  // namespace

bool has_steered(const Session& session) { return !session.turn.steered.empty(); }

void join_steered(Session& session) {
  auto waiting = std::exchange(session.turn.steered, {});
  for (auto& s : waiting) {
    record(session, sessions::UserMessage{s.message, std::move(s.prompt)});
    session.conversation.history.push_back(std::move(s.message));
  }
}

boost::asio::awaitable<SteerOutcome> Steering::steer(std::shared_ptr<Session> session, UserPrompt prompt,
                                                     IdleBehavior idle) {
  Session& s = *session;
  if (prompt.message_id.empty()) prompt.message_id = support::random_id("msg_");
  if (auto running = s.turn.cancel) {
    Message message = user_message_from(prompt);
    message.id = prompt.message_id;
    if (!co_await submit_hooks(s, message, running.get())) co_return SteerOutcome::Blocked;
    if (s.turn.cancel == running) {  // still the same turn: the message waits for its next model request
      auto blocks = sessions::prompt_record(prompt);
      show_user_message(loop_.host(), s.id, blocks, message.id);
      s.turn.steered.push_back({std::move(message), std::move(blocks)});
      co_return SteerOutcome::Injected;
    }
    // The turn ended while the hooks ran: as if no turn had been running (its hooks run again).
  }
  if (idle == IdleBehavior::PromptRequired) co_return SteerOutcome::PromptRequired;
  co_return co_await start_turn(std::move(session), std::move(prompt));
}

boost::asio::awaitable<bool> Steering::submit_hooks(Session& session, Message& message, support::CancelSource* cancel) {
  auto engine = session.services.engine;
  if (!engine || !engine->hooks().has(hooks::HookEvent::UserPromptSubmit)) co_return true;
  auto set = std::shared_ptr<const hooks::HookSet>(engine, &engine->hooks());
  TurnScope scope{session.id + "-t" + std::to_string(session.conversation.turn_count), std::nullopt, std::nullopt};
  auto input = hook_input(session, scope);
  input.prompt = message.text;
  auto outcome = co_await loop_.hooks().fire(session, set, hooks::HookEvent::UserPromptSubmit, std::move(input), cancel);
  if (outcome.blocked || outcome.stop_turn) {
    std::string why = outcome.blocked ? outcome.reason : outcome.stop_reason;
    notify(session, {NoticeSeverity::Warning, "Your message was blocked by a hook" + decided_by(outcome), why});
    co_return false;
  }
  for (const auto& c : outcome.additional_context) message.text += "\n\n<context>\n" + c + "\n</context>";
  co_return true;
}

namespace {
// A turn a steered message started, as the steering request sees it until it answers.
struct TurnStart {
  explicit TurnStart(boost::asio::any_io_executor ex) : done(std::move(ex)) {}
  support::OneShotEvent done;  // set once the turn is past its hooks, or has ended
  bool started = false;
  std::optional<StopReason> ended;
  std::exception_ptr error;  // it failed before it started
};

boost::asio::awaitable<void> run_started_turn(Task& task, EditorHost& host, std::shared_ptr<Session> session,
                                              UserPrompt prompt, std::shared_ptr<TurnStart> start) {
  support::CancelSource request_cancel;  // no request waits for this turn: session/cancel stops it
  auto shown = sessions::prompt_record(prompt);
  const std::string id = prompt.message_id;
  auto on_started = [start, &host, sid = session->id, shown = std::move(shown), id] {
    show_user_message(host, sid, shown, id);
    start->started = true;
    start->done.set();
  };
  try {
    auto reason = co_await task.run(session, std::move(prompt), request_cancel, on_started);
    start->ended = reason;
  } catch (const std::exception& e) {
    if (!start->started) start->error = std::current_exception();
    // Past its start nobody waits for an answer: the user is told here.
    else notify(*session, {NoticeSeverity::Error, "The turn your message started failed", e.what()});
  }
  start->done.set();
}
}  // namespace

// Answers once the new turn is past its UserPromptSubmit hooks (as codex-acp answers once the
// turn runs); the turn goes on in the background and session/cancel stops it like a prompt's.
boost::asio::awaitable<SteerOutcome> Steering::start_turn(std::shared_ptr<Session> session, UserPrompt prompt) {
  auto ex = co_await boost::asio::this_coro::executor;
  auto start = std::make_shared<TurnStart>(ex);
  // Shown as the user's message with the id the journal keeps (the task keeps an id it is given).
  boost::asio::co_spawn(ex, run_started_turn(task_, loop_.host(), session, std::move(prompt), start), boost::asio::detached);
  co_await start->done.wait();
  if (start->error) std::rethrow_exception(start->error);
  if (!start->started) {
    if (start->ended == StopReason::Cancelled)
      throw AgentError(AgentError::Kind::InvalidRequest, "The session was cancelled before the steered message started a turn");
    co_return SteerOutcome::Blocked;  // a hook blocked it, or a command answered it at once
  }
  co_return SteerOutcome::StartedNewTurn;
}

}  // namespace runtime
