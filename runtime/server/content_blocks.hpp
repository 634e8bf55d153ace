#pragma once
// A prompt's ACP ContentBlocks as the user message the model gets.
#include <boost/json.hpp>

#include "runtime/protocol/conversation.hpp"

namespace runtime::server {

// Throws acp::RpcError (-32602) naming the block that is not valid: an empty prompt, a block
// that is not an object, a text block whose text is not a string, an unknown type.
Message user_message_from(const boost::json::array& prompt);

}  // namespace runtime::server
