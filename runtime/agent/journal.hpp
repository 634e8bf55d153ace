#pragma once
// Appending to a session's journal from the agent: a failing disk is logged and kept in
// `session.services.journal_error` for the end of the turn to tell the editor, never fatal to the turn in flight.
#include "runtime/agent/session.hpp"
#include "runtime/sessions/session_store.hpp"

namespace runtime {

void record(Session& session, sessions::RecordBody body);
// Several records in one write: all of them are journaled or none is.
void record_all(Session& session, std::vector<sessions::RecordBody> bodies);
// "Always allow" (true) / "Always reject" (false) remembered for each of `keys` (issue 36), each
// change journaled so that session/load and session/resume keep it.
void remember_answer(Session& session, const std::vector<std::string>& keys, bool allowed);
// Every remembered answer forgotten (`/permissions clear`), journaled.
void forget_answers(Session& session);
// The turn's end: a turn_end record, then fsync (a finished turn survives a crash).
void record_turn_end(Session& session, const char* stop_reason);
// The settings changed and each change journaled (a load's restore applies them without).
void change_settings(Session& session, const SettingsChange& change);
// Every journaled setting as records: what a fork starts with.
std::vector<sessions::RecordBody> settings_records(const SessionSettings& settings);

}  // namespace runtime
