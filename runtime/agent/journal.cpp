#include "runtime/agent/journal.hpp"

#include <spdlog/spdlog.h>

namespace runtime {

namespace {
template <typename Write>
void journal(Session& session, Write&& write) {
  if (!session.log) return;
  try {
    write(*session.log);
  } catch (const std::exception& e) {
    spdlog::error("session {}: cannot write the session log: {}", session.id, e.what());
    if (session.log_error.empty()) session.log_error = e.what();
  }
}
}  // namespace

void record(Session& session, sessions::RecordBody body) {
  journal(session, [&](sessions::SessionWriter& log) { log.append(std::move(body)); });
}

void record_all(Session& session, std::vector<sessions::RecordBody> bodies) {
  journal(session, [&](sessions::SessionWriter& log) { log.append_all(std::move(bodies)); });
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
