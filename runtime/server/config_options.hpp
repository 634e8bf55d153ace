#pragma once
// What the editor's pickers show for a session: ACP session modes and config options (mode,
// model when one is configured, thought level for OpenAI models, and agent when there is more
// than one, executor when executors/ declares one).
#include <boost/json.hpp>
#include <string>
#include <vector>

#include "acp/schema/config.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/providers/model_catalog.hpp"

namespace runtime::server {

acp::schema::SessionModeState mode_state(const Session& session);
std::vector<acp::schema::SessionConfigOption> config_option_list(const Session& session, const providers::ModelCatalog& models);
// The same as JSON.
boost::json::object modes_state(const Session& session);
boost::json::array config_options(const Session& session, const providers::ModelCatalog& models);
// The values of the model picker, the session's current model first; empty when none is configured.
std::vector<std::string> model_values(const Session& session, const providers::ModelCatalog& models);
// The values of the thought level picker ("default", then OpenAI's reasoning_effort levels);
// empty when the current model is not an OpenAI one. "default" is the session's empty effort.
std::vector<std::string> thought_level_values(const Session& session);
inline constexpr const char* kDefaultThoughtLevel = "default";

}  // namespace runtime::server
