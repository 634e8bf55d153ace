#include "runtime/agent/journal.hpp"

#include <spdlog/spdlog.h>

#include <optional>

namespace runtime {

namespace {
template <typename Write>
void journal(Session& session, Write&& write) {
  if (!session.services.journal) return;
  try {
    write(*session.services.journal);
  } catch (const std::exception& e) {
    spdlog::error("session {}: cannot write the session log: {}", session.id, e.what());
    if (session.services.journal_error.empty()) session.services.journal_error = e.what();
  }
}

// What a sub-agent shown inside its parent's session journals there: what the editor was shown of
// it (its answers, its tool calls); its conversation with its model stays its own.
std::optional<sessions::RecordBody> shown_of_subagent(const Session& child, sessions::RecordBody&& body) {
  if (std::holds_alternative<sessions::ToolCallState>(body)) return std::move(body);
  if (auto* a = std::get_if<sessions::AssistantMessage>(&body)) {
    Message said;
    said.role = Message::Role::Assistant;
    said.id = std::move(a->message.id);
    said.text = std::move(a->message.text);
    said.reasoning = std::move(a->message.reasoning);
    if (said.text.empty() && said.reasoning.empty()) return std::nullopt;
    return sessions::SubagentMessage{child.shown_in->agent_id, std::move(said)};
  }
  return std::nullopt;
}
}  // namespace

void record(Session& session, sessions::RecordBody body) {
  if (!session.services.journal && session.shown_in) {
    if (auto shown = shown_of_subagent(session, std::move(body))) record(*session.shown_in->parent, std::move(*shown));
    return;
  }
  journal(session, [&](sessions::SessionWriter& log) { log.append(std::move(body)); });
}

void record_all(Session& session, std::vector<sessions::RecordBody> bodies) {
  if (!session.services.journal && session.shown_in) {
    std::vector<sessions::RecordBody> shown;
    for (auto& b : bodies)
      if (auto s = shown_of_subagent(session, std::move(b))) shown.push_back(std::move(*s));
    if (!shown.empty()) record_all(*session.shown_in->parent, std::move(shown));
    return;
  }
  journal(session, [&](sessions::SessionWriter& log) { log.append_all(std::move(bodies)); });
}

void remember_answer(Session& session, const std::vector<std::string>& keys, bool allowed) {
  std::vector<sessions::RecordBody> changed;
  for (const auto& key : keys) {
    auto [it, added] = session.remembered_permissions.emplace(key, allowed);
    if (!added && it->second == allowed) continue;
    it->second = allowed;
    changed.push_back(sessions::PermissionMemory{key, allowed});
  }
  if (!changed.empty()) record_all(session, std::move(changed));
}

void forget_answers(Session& session) {
  session.remembered_permissions.clear();
  record(session, sessions::PermissionMemory{});
}

void record_turn_end(Session& session, const char* stop_reason) {
  if (!session.services.journal) return;
  record(session, sessions::TurnEnd{stop_reason});
  try {
    session.services.journal->turn_boundary();
  } catch (const std::exception& e) {
    spdlog::error("session {}: cannot sync the session log: {}", session.id, e.what());
    if (session.services.journal_error.empty()) session.services.journal_error = e.what();
  }
}

void change_settings(Session& session, const SettingsChange& change) {
  session.settings.apply(change);
  const auto& now = session.settings;
  if (change.mode) record(session, sessions::ModeChange{mode_id(now.mode)});
  if (change.agent_name) record(session, sessions::AgentChange{now.agent_name});
  if (change.model) record(session, sessions::ModelChange{now.model});
  if (change.reasoning_effort) record(session, sessions::ThoughtLevelChange{now.reasoning_effort});
  if (change.executor) record(session, sessions::ExecutorChange{now.executor});
}

std::vector<sessions::RecordBody> settings_records(const SessionSettings& s) {
  return {sessions::ModeChange{mode_id(s.mode)}, sessions::AgentChange{s.agent_name}, sessions::ModelChange{s.model},
          sessions::ThoughtLevelChange{s.reasoning_effort}, sessions::ExecutorChange{s.executor}};
}

}  // namespace runtime
