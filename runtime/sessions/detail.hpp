#pragma once
// Internal to runtime/sessions: what the store, the loader and the writer share.
#include <filesystem>
#include <string>
#include <string_view>

#include "runtime/sessions/session_store.hpp"

namespace runtime::sessions::detail {

[[noreturn]] void throw_errno(const std::string& what);

// Title candidate of a user message: the prompt's text blocks (what the user typed), else the text.
std::string user_title(const UserMessage& u);

struct LoadOptions {
  bool conversation = true;  // build the conversation and the replay (false: only the summary)
};

// A session's log text read back: its records replayed into the summary, the conversation and
// the editor's replay. A corrupt or half-written line is skipped with a warning, tool calls
// left without a result are marked interrupted.
LoadedSession load_text(std::string_view id, std::string_view text, LoadOptions opt = {});

}  // namespace runtime::sessions::detail
