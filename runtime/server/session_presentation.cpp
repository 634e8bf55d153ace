#include "runtime/server/session_presentation.hpp"

#include <utility>

namespace runtime::server {

namespace {
std::string commands_key(const CommandsChanged& c) {
  std::string shown;
  for (const auto& command : c.commands) shown += command.name + '\n' + command.description + '\n' + command.input_hint + '\n';
  return shown;
}
}  // namespace

void SessionPresentation::opening(const std::string& session_id) {
  auto& s = shown_[session_id];
  s.opening = true;
  s.held.clear();
}

std::vector<SessionEvent> SessionPresentation::announced(const std::string& session_id) {
  auto it = shown_.find(session_id);
  if (it == shown_.end()) return {};
  it->second.opening = false;
  return std::exchange(it->second.held, {});
}

bool SessionPresentation::admit(const std::string& session_id, SessionEvent& event) {
  auto* commands = std::get_if<CommandsChanged>(&event);
  auto* title = std::get_if<TitleChanged>(&event);
  if (!commands && !title && !std::holds_alternative<Notice>(event)) return true;  // the hot path: one index test
  auto it = shown_.find(session_id);
  if (it == shown_.end() && !commands && !title) return true;  // a sub-agent's session, or one closed
  auto& s = it != shown_.end() ? it->second : shown_[session_id];
  if (s.opening && !title) {
    s.held.push_back(std::move(event));
    return false;
  }
  if (title) {
    if (title->title == s.title) return false;
    s.title = title->title;
  } else if (commands) {
    auto key = commands_key(*commands);
    if (key == s.commands) return false;
    s.commands = std::move(key);
  }
  return true;
}

bool SessionPresentation::show_config_options(const std::string& session_id, std::string options) {
  auto& s = shown_[session_id];
  if (s.config_options == options) return false;
  s.config_options = std::move(options);
  return true;
}

}  // namespace runtime::server
