#pragma once
// session/prompt: the user's content blocks in, why the turn stopped (and its tokens) out.
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "acp/schema/content.hpp"
#include "acp/schema/reader.hpp"

namespace acp::schema {

struct PromptRequest {
  std::string sessionId;
  std::vector<ContentBlock> prompt;  // at least one block
  std::optional<boost::json::object> meta;
  std::optional<std::string> messageId;  // the client's own id of this user message (issue 36 rewind)
};

// Unstable PromptResponse.usage: the turn's tokens.
struct Usage {
  std::int64_t totalTokens = 0;
  std::int64_t inputTokens = 0;
  std::int64_t outputTokens = 0;
  std::optional<std::int64_t> cachedReadTokens;
};

struct PromptResponse {
  std::string stopReason;  // end_turn | max_tokens | max_turn_requests | refusal | cancelled
  std::optional<Usage> usage;
  std::optional<std::string> userMessageId;  // the user message's id, the client's or a fresh one
};

void read(const Reader& r, PromptRequest& out);
void read(const Reader& r, Usage& out);
void read(const Reader& r, PromptResponse& out);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const PromptRequest& p);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const Usage& u);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const PromptResponse& p);

}  // namespace acp::schema
