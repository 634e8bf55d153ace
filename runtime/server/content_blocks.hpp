#pragma once
// A prompt's ACP content blocks (decoded by acp::schema) as the engine's UserPrompt.
#include <vector>

#include "acp/schema/content.hpp"
#include "runtime/protocol/user_prompt.hpp"

namespace runtime::server {

// Takes the blocks whole: their strings are moved, not copied.
UserPrompt user_prompt_from(std::vector<acp::schema::ContentBlock> blocks);

}  // namespace runtime::server
