// `_session/steering` as codex-acp and claude-agent-acp ship it: advertised as
// initialize `_meta.steering.supported`; {sessionId, prompt: ContentBlock[], _meta?: {steering:
// {idleBehavior}}} -> {outcome: injected | startedNewTurn | promptRequired (reason noRunningTurn)
// | failed (reason blockedByHook)}. The work is runtime/agent/steering.hpp's.
#include "acp/params.hpp"
#include "runtime/server/acp_agent.hpp"
#include "runtime/server/content_blocks.hpp"
#include "runtime/server/rpc_errors.hpp"

namespace runtime::server {

namespace json = boost::json;

namespace {
// `_meta.steering.idleBehavior`: "promptRequired" hands a message sent while no turn runs back
// to the client; anything else (or none) starts a turn with it.
IdleBehavior idle_behavior(const json::object& params) {
  const auto* meta = params.if_contains("_meta");
  if (!meta || meta->is_null()) return IdleBehavior::StartNewTurn;
  if (!meta->is_object()) throw acp::invalid_params("'_meta' must be an object");
  const auto* steering = meta->as_object().if_contains("steering");
  if (!steering || steering->is_null()) return IdleBehavior::StartNewTurn;
  if (!steering->is_object()) throw acp::invalid_params("'_meta.steering' must be an object {idleBehavior}");
  const auto* idle = steering->as_object().if_contains("idleBehavior");
  if (!idle || idle->is_null()) return IdleBehavior::StartNewTurn;
  if (!idle->is_string()) throw acp::invalid_params("'_meta.steering.idleBehavior' must be a string");
  return idle->as_string() == "promptRequired" ? IdleBehavior::PromptRequired : IdleBehavior::StartNewTurn;
}
}  // namespace

json::object AcpAgent::initialize_meta() { return json::object{{"steering", json::object{{"supported", true}}}}; }

acp::awaitable<json::value> AcpAgent::steer(json::value params) {
  acp::Params p(params);
  auto session = find_session(p);
  const auto& blocks = p.required_array("prompt");
  Message message = user_message_from(blocks);  // -32602 for no block or a bad one
  if (auto id = p.optional_string("messageId")) message.id = *id;  // the client's own id (as on session/prompt)
  const IdleBehavior idle = idle_behavior(p.object());
  auto body = [&]() -> acp::awaitable<SteerOutcome> { co_return co_await steering_.steer(session, std::move(message), blocks, idle); };
  const SteerOutcome outcome = co_await mapping_errors(body);
  json::object reply{{"outcome", steer_outcome_name(outcome)}};
  if (outcome == SteerOutcome::PromptRequired) reply["reason"] = "noRunningTurn";
  if (outcome == SteerOutcome::Blocked) reply["reason"] = "blockedByHook";
  co_return reply;
}

}  // namespace runtime::server
