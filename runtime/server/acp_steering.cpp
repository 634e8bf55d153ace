#include "runtime/server/acp_steering.hpp"

#include "acp/methods.hpp"
#include "runtime/server/acp_rewind.hpp"
#include "runtime/server/agent_errors.hpp"
#include "runtime/server/content_blocks.hpp"

namespace runtime::server {

namespace schema = acp::schema;

void AcpSteering::bind(acp::Binder& binder) { binder.method(acp::methods::kSessionSteering, this, &AcpSteering::steer); }

boost::json::object AcpSteering::initialize_meta() {
  return boost::json::object{{"steering", boost::json::object{{"supported", true}}}};
}

acp::awaitable<schema::SteeringResponse> AcpSteering::steer(schema::SteeringRequest req) {
  auto session = find_open_session(sessions_, req.sessionId);
  UserPrompt prompt = user_prompt_from(std::move(req.prompt));
  prompt.message_id = prompt_message_id(req.messageId, *session);
  const IdleBehavior idle = req.promptRequired ? IdleBehavior::PromptRequired : IdleBehavior::StartNewTurn;
  auto body = [&]() -> acp::awaitable<SteerOutcome> { co_return co_await steering_.steer(session, std::move(prompt), idle); };
  const SteerOutcome outcome = co_await mapping_errors(body);
  schema::SteeringResponse reply{steer_outcome_name(outcome), std::nullopt};
  if (outcome == SteerOutcome::PromptRequired) reply.reason = "noRunningTurn";
  if (outcome == SteerOutcome::Blocked) reply.reason = "blockedByHook";
  co_return reply;
}

}  // namespace runtime::server
