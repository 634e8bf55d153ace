#include "runtime/agent/journal.hpp"

#include <spdlog/spdlog.h>

namespace runtime {

void record(Session& session, sessions::RecordBody body) {
  if (!session.log) return;
  try {
    session.log->append(std::move(body));
  } catch (const std::exception& e) {
    spdlog::error("session {}: cannot write the session log: {}", session.id, e.what());
    if (session.log_error.empty()) session.log_error = e.what();
  }
}

void record_turn_end(Session& session, const char* stop_reason) {
  if (!session.log) return;
  record(session, sessions::TurnEnd{stop_reason});
  try {
    session.log->turn_boundary();
  } catch (const std::exception& e) {
    spdlog::error("session {}: cannot sync the session log: {}", session.id, e.what());
    if (session.log_error.empty()) session.log_error = e.what();
  }
}

}  // namespace runtime
