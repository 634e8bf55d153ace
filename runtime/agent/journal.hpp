#pragma once
// Appending to a session's journal from the agent: a failing disk is logged and kept in
// `session.log_error` for the end of the turn to tell the editor, never fatal to the turn in flight.
#include "runtime/agent/session.hpp"
#include "runtime/sessions/session_store.hpp"

namespace runtime {

void record(Session& session, sessions::RecordBody body);
// Several records in one write: all of them are journaled or none is.
void record_all(Session& session, std::vector<sessions::RecordBody> bodies);
// The turn's end: a turn_end record, then fsync (a finished turn survives a crash).
void record_turn_end(Session& session, const char* stop_reason);

}  // namespace runtime
