#pragma once
// What the editor's pickers show for a session: ACP session modes and config options (mode,
// model when one is configured, and agent when there is more than one).
#include <boost/json.hpp>
#include <string>
#include <vector>

#include "runtime/agent/session.hpp"
#include "runtime/providers/model_catalog.hpp"

namespace runtime::server {

boost::json::object modes_state(const Session& session);          // SessionModeState
boost::json::array config_options(const Session& session, const providers::ModelCatalog& models);  // SessionConfigOption[]
// The values of the model picker, the session's current model first; empty when none is configured.
std::vector<std::string> model_values(const Session& session, const providers::ModelCatalog& models);

}  // namespace runtime::server
