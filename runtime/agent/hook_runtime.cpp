#include "runtime/agent/hook_runtime.hpp"

#include "runtime/hooks/hooks_async.hpp"

namespace runtime {

hooks::HookInput hook_input(const Session& session, const TurnScope& scope) {
  hooks::HookInput input;
  // Inside a sub-agent the hooks are told the session the user started, as they always were.
  input.session_id = session.parent_id.empty() ? session.id : session.parent_id;
  input.turn_id = scope.turn_id;
  input.cwd = session.settings.cwd;
  input.agent_id = scope.agent_id;
  input.agent_type = scope.agent_type;
  return input;
}

std::string decided_by(const hooks::HookOutcome& outcome) {
  return outcome.decided_by_label ? " (" + *outcome.decided_by_label + ")" : std::string();
}

boost::asio::awaitable<hooks::HookOutcome> HookRuntime::fire(const Session& session,
                                                             std::shared_ptr<const hooks::HookSet> set,
                                                             hooks::HookEvent event, hooks::HookInput input,
                                                             support::CancelSource* cancel, const std::string& executor) {
  if (!set || !set->has(event)) co_return hooks::HookOutcome{};
  auto place = co_await hook_place(session, *set, event, input, executor, pool_, cancel);
  auto outcome = co_await hooks::run_hooks_async(pool_, std::move(set), event, std::move(input), cancel, std::move(place));
  // A hook's systemMessage is free text for the user: the notice names the event, the text is the detail.
  for (const auto& m : outcome.system_messages)
    notify(session, {NoticeSeverity::Info, "Message from a " + std::string(hooks::to_string(event)) + " hook", m});
  for (const auto& e : outcome.errors) notify_error(session, event, outcome, e);
  co_return outcome;
}

// A hook that could not run at all is an error the user must see (a guard that never looked);
// whether it blocked is said in the title. Other hook errors are warnings.
void HookRuntime::notify_error(const Session& session, hooks::HookEvent event, const hooks::HookOutcome& outcome,
                               const hooks::HookError& e) {
  const std::string ev(hooks::to_string(event));
  if (!e.could_not_run) {
    notify(session, {NoticeSeverity::Warning, "A " + ev + " hook failed", e.to_string()});
    return;
  }
  const bool blocked = outcome.blocked && outcome.decided_by == e.hook;
  const std::string what = event == hooks::HookEvent::PreToolUse ? "the tool call" : "the prompt";
  notify(session, {NoticeSeverity::Error,
                   "A " + ev + " hook could not run" + (blocked ? ", so " + what + " was blocked" : std::string()),
                   e.to_string()});
}

}  // namespace runtime
