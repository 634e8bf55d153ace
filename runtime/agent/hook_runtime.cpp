#include "runtime/agent/hook_runtime.hpp"

#include "runtime/hooks/hooks_async.hpp"

namespace runtime {

hooks::HookInput hook_input(const Session& session, const TurnScope& scope) {
  hooks::HookInput input;
  // Inside a sub-agent the hooks are told the session the user started, as they always were.
  input.session_id = session.parent_id.empty() ? session.id : session.parent_id;
  input.turn_id = scope.turn_id;
  input.cwd = session.cwd;
  input.agent_id = scope.agent_id;
  input.agent_type = scope.agent_type;
  return input;
}

std::string decided_by(const hooks::HookOutcome& outcome) {
  return outcome.decided_by_label ? " (" + *outcome.decided_by_label + ")" : std::string();
}

void notify(EditorHost& host, const Session& session, NoticeSeverity severity, std::string title,
            std::string description) {
  host.emit(session.id, Notice{severity, std::move(title), std::move(description)});
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
    notify(host_, session, NoticeSeverity::Info, "Message from a " + std::string(hooks::to_string(event)) + " hook", m);
  for (const auto& e : outcome.errors)
    notify(host_, session, NoticeSeverity::Warning, "A " + std::string(hooks::to_string(event)) + " hook failed",
           e.to_string());
  co_return outcome;
}

}  // namespace runtime
