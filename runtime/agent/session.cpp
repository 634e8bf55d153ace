#include "runtime/agent/session.hpp"

#include "runtime/protocol/editor_host.hpp"

namespace runtime {

void SessionSettings::apply(const SettingsChange& change) {
  if (change.mode) mode = *change.mode;
  if (change.agent_name) agent_name = *change.agent_name;
  if (change.model) model = *change.model;
  if (change.executor) executor = *change.executor;
  if (change.reasoning_effort) reasoning_effort = *change.reasoning_effort;
}

Session Session::child_of(const Session& parent, std::shared_ptr<const engine::Engine> engine, const std::string& agent) {
  Session child;
  child.id = parent.id;
  child.settings.cwd = parent.settings.cwd;
  child.settings.additional_roots = parent.settings.additional_roots;
  child.settings.mode = parent.settings.mode;
  child.settings.executor = parent.settings.executor;  // its tools run where the parent's do
  child.settings.agent_name = agent;
  child.remembered_permissions = parent.remembered_permissions;
  child.services.executors = parent.services.executors;
  child.services.executor_files = parent.services.executor_files;  // and read the same skills and AGENTS.md
  child.services.editor = parent.services.editor;
  child.services.checkpoints = parent.services.checkpoints;  // its edits are its parent's turn's
  child.services.view = engine->session_view(child.settings.cwd, agent, child.services.executor_files.get());
  child.services.engine = std::move(engine);
  return child;
}

std::shared_ptr<Executor> use_executor(const Session& session, const std::string& id) {
  const auto& registry = session.services.executors;
  return registry ? registry->use(id, session.settings.cwd, session.id) : nullptr;
}

void notify(const Session& session, Notice notice) {
  if (session.closing->cancelled() || !session.services.editor) return;
  session.services.editor->emit(session.id, std::move(notice));
}

}  // namespace runtime
