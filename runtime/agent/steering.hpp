#pragma once
// Steering (the `_session/steering` extension of codex-acp and claude-agent-acp): a message the
// user sends while a turn runs joins that turn at its next model request, after the tool calls in
// flight finish (a streaming answer is never cut); the turn still ends once. With no turn running
// it either starts one, as a prompt would, or is handed back to the client to send as a prompt.
// UserPromptSubmit hooks run for a steered message as for a prompt, and can block it.
#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>
#include <memory>
#include <string>

#include "runtime/agent/session.hpp"
#include "runtime/protocol/user_prompt.hpp"

namespace runtime {

class AgentLoop;
class Task;

// What happened to a steered message.
enum class SteerOutcome {
  Injected,        // it joins the running turn
  StartedNewTurn,  // no turn ran: it started one (which runs on after the answer)
  PromptRequired,  // no turn ran and the client asked to send it as a prompt itself: nothing changed
  Blocked,         // a UserPromptSubmit hook blocked it: nothing changed (the user saw why)
};
const char* steer_outcome_name(SteerOutcome o);  // "injected", "startedNewTurn", "promptRequired", "failed"

// What to do with a message steered while no turn runs (`_meta.steering.idleBehavior`).
enum class IdleBehavior { StartNewTurn, PromptRequired };

// True when messages steered into the running turn wait for its next model request.
bool has_steered(const Session& session);
// The steered messages waiting, in the order they came, joined to the conversation (and the
// journal) at this point: the turn loop calls it before each model request, and the turn's end
// for any left (a cancel, a turn that ended before its next request).
void join_steered(Session& session);

class Steering {
 public:
  Steering(Task& task, AgentLoop& loop) : task_(task), loop_(loop) {}

  // `prompt` as the user sent it (at least one part); its message_id is the client's when it
  // sent one, else a fresh one is made.
  boost::asio::awaitable<SteerOutcome> steer(std::shared_ptr<Session> session, UserPrompt prompt, IdleBehavior idle);

 private:
  // The UserPromptSubmit hooks for a message steered into the running turn; false: blocked.
  boost::asio::awaitable<bool> submit_hooks(Session& session, Message& message, support::CancelSource* cancel);
  boost::asio::awaitable<SteerOutcome> start_turn(std::shared_ptr<Session> session, UserPrompt prompt);

  Task& task_;
  AgentLoop& loop_;
};

}  // namespace runtime
