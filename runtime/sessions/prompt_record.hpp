#pragma once
// A user prompt as the journal keeps it (UserMessage::prompt): the journal's own record format,
// one object per part, {"type": "text" | "image" | "audio" | "resource_link" | "resource", ...}.
// It has the shape of the editor protocol's content blocks, as journals written before the
// prompt was typed have (those hold the blocks as the editor sent them), so the replay sends any
// journal's prompt back to the editor as it is.
#include <boost/json.hpp>

#include "runtime/protocol/user_prompt.hpp"

namespace runtime::sessions {

boost::json::array prompt_record(const UserPrompt& prompt);

}  // namespace runtime::sessions
