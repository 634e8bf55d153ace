#pragma once
// Steering (the `_session/steering` extension of codex-acp and claude-agent-acp), advertised as
// initialize `_meta.steering.supported`:
//   {sessionId, prompt: ContentBlock[], messageId?, _meta?: {steering: {idleBehavior}}}
//   -> {outcome: injected | startedNewTurn | promptRequired | failed, reason?}
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "acp/schema/content.hpp"
#include "acp/schema/reader.hpp"

namespace acp::schema {

struct SteeringRequest {
  std::string sessionId;
  std::vector<ContentBlock> prompt;  // at least one block
  std::optional<std::string> messageId;  // the client's own id of the message
  bool promptRequired = false;  // `_meta.steering.idleBehavior: "promptRequired"`: idle, hand it back
};
struct SteeringResponse {
  std::string outcome;
  std::optional<std::string> reason;  // noRunningTurn (promptRequired), blockedByHook (failed)
};

void read(const Reader& r, SteeringRequest& out);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const SteeringResponse& r);

}  // namespace acp::schema
