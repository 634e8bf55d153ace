#pragma once
// What the editor's pickers show for a session: ACP session modes and config options (mode,
// and agent when there is more than one).
#include <boost/json.hpp>

#include "runtime/agent/session.hpp"

namespace runtime::server {

boost::json::object modes_state(const Session& session);          // SessionModeState
boost::json::array config_options(const Session& session);         // SessionConfigOption[]

}  // namespace runtime::server
