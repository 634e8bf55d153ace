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

}  // namespace runtime
