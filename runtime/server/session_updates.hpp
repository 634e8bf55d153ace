#pragma once
// The one encoder of `session/update`: every engine event, live or replayed by session/load,
// becomes the ACP `update` object here, in the form the client said it can show (notices and
// compactions as their own updates, or as agent message text).
#include <boost/json.hpp>
#include <optional>
#include <string>

#include "acp/client_api.hpp"
#include "acp/schema/config.hpp"

#include "runtime/protocol/events.hpp"

namespace runtime::server {

// nullopt: nothing for this client (a compaction summary delta for a client without compaction view).
std::optional<boost::json::object> encode_update(const SessionEvent& event, const acp::ClientCapabilities& client);

// The `update` of a replayed event that kept the log's JSON text (JournalChunk, JournalToolCall),
// appended to `out` as JSON text: that text spliced in, unparsed, where encode_update would have
// put the decoded values; the same update, byte for byte, as encode_update of the decoded event.
void append_journal_update(std::string& out, const JournalChunk& chunk);
void append_journal_update(std::string& out, const JournalToolCall& call);
// What append_journal_update appends, about (for reserving room).
std::size_t journal_update_size(const JournalChunk& chunk);
std::size_t journal_update_size(const JournalToolCall& call);

// config_option_update: the session's config options changed (a model list arrived, the mode
// or the model was set by a method whose answer carries no options). Not an engine event: what
// the pickers offer is the server's.
boost::json::object config_option_update(const std::vector<acp::schema::SessionConfigOption>& options);

// A cost as the editor is shown it: 6 significant digits, so that a sum of prices reads 1.8 and not
// 1.7999999999999998 (the session log keeps the exact sums).
double shown_cost(double amount);

// ACP ToolCall fields (toolCallId plus what is set), for tool_call, tool_call_update and the
// tool call of a permission request.
boost::json::object encode_tool_call(const std::string& id, const ToolCallFields& fields);

}  // namespace runtime::server
