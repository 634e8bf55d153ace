#pragma once
// Firing a session's hooks: one place builds what every hook is told, runs them off the io
// thread, and shows the user their messages and errors as notices.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <optional>
#include <string>

#include "runtime/agent/session.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/protocol/editor_host.hpp"

namespace runtime {

// Which turn (and sub-agent) an event belongs to.
struct TurnScope {
  std::string turn_id;
  std::optional<std::string> agent_id;
  std::optional<std::string> agent_type;
};

// What every hook of this session and turn is told about where it runs.
hooks::HookInput hook_input(const Session& session, const TurnScope& scope);

// " (<label of the hook that decided>)", or "" when no hook is named.
std::string decided_by(const hooks::HookOutcome& outcome);

// Shows a notice to the user only (never to the model).
void notify(EditorHost& host, const Session& session, NoticeSeverity severity, std::string title,
            std::string description = {});

class HookRuntime {
 public:
  HookRuntime(boost::asio::thread_pool& pool, EditorHost& host) : pool_(pool), host_(host) {}

  // Runs the event's hooks (nothing when none is configured) and shows their messages and errors.
  boost::asio::awaitable<hooks::HookOutcome> fire(const Session& session, std::shared_ptr<const hooks::HookSet> set,
                                                  hooks::HookEvent event, hooks::HookInput input,
                                                  support::CancelSource* cancel);

  boost::asio::thread_pool& pool() { return pool_; }
  EditorHost& host() { return host_; }

 private:
  boost::asio::thread_pool& pool_;
  EditorHost& host_;
};

}  // namespace runtime
