#pragma once
// Appending to a session's journal from the agent: a failing disk is logged, never fatal to
// the turn in flight.
#include "runtime/agent/session.hpp"
#include "runtime/sessions/session_store.hpp"

namespace runtime {

void record(Session& session, sessions::RecordBody body);

}  // namespace runtime
