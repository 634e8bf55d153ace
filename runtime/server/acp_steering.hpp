#pragma once
// `_session/steering` over ACP (issue 36, docs/editors.md): a message sent while a turn runs joins
// it; idle, it starts a turn or is handed back. The work is runtime/agent/steering.hpp's.
#include <boost/json.hpp>

#include "acp/binder.hpp"
#include "acp/schema/steering.hpp"
#include "runtime/agent/session_manager.hpp"
#include "runtime/agent/steering.hpp"
#include "runtime/agent/task.hpp"

namespace runtime::server {

class AcpSteering {
 public:
  AcpSteering(SessionManager& sessions, Task& task) : sessions_(sessions), steering_(task, sessions.loop()) {}
  void bind(acp::Binder& binder);
  // What initialize's `_meta` advertises: `{steering: {supported: true}}`, where codex-acp and
  // claude-agent-acp put it.
  static boost::json::object initialize_meta();

 private:
  acp::awaitable<acp::schema::SteeringResponse> steer(acp::schema::SteeringRequest req);

  SessionManager& sessions_;
  Steering steering_;
};

}  // namespace runtime::server
