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

// Where the hooks of `event` run when `executor` is not local (DESIGN §10): connected, each
// matching hook's script copied to ~/.cache/openvaala/hooks/<hash>/<file name> there (only when
// content or mode changed) and its plugin's folder to ~/.cache/openvaala/plugins/<name>-<hash>/;
// `input.cwd` becomes that executor's working directory. Null for local (hook_place.cpp).
boost::asio::awaitable<std::shared_ptr<const hooks::HookPlace>> hook_place(const Session& session, const hooks::HookSet& set,
                                                                          hooks::HookEvent event, hooks::HookInput& input,
                                                                          const std::string& executor,
                                                                          boost::asio::thread_pool& pool,
                                                                          support::CancelSource* cancel);

class HookRuntime {
 public:
  HookRuntime(boost::asio::thread_pool& pool, EditorHost& host) : pool_(pool), host_(host) {}

  // Runs the event's hooks (nothing when none is configured) on `executor` (empty: the session's
  // default one) and shows their messages and errors.
  boost::asio::awaitable<hooks::HookOutcome> fire(const Session& session, std::shared_ptr<const hooks::HookSet> set,
                                                  hooks::HookEvent event, hooks::HookInput input,
                                                  support::CancelSource* cancel, const std::string& executor = {});

  boost::asio::thread_pool& pool() { return pool_; }
  EditorHost& host() { return host_; }

 private:
  void notify_error(const Session& session, hooks::HookEvent event, const hooks::HookOutcome& outcome,
                    const hooks::HookError& e);

  boost::asio::thread_pool& pool_;
  EditorHost& host_;
};

}  // namespace runtime
