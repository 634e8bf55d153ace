#pragma once
// What the editor was last shown of each session, keyed by session id, so that the engine does not
// track it: notices and slash commands held until the editor has the session/new|load|resume
// answer (it does not know the session before), and the slash commands, title and config options
// sent only when they changed.
#include <map>
#include <string>
#include <vector>

#include "runtime/protocol/events.hpp"

namespace runtime::server {

class SessionPresentation {
 public:
  // Opening (again): what it held before is dropped.
  void opening(const std::string& session_id);
  // The answer is out: returns what was held, in order, to send now.
  std::vector<SessionEvent> announced(const std::string& session_id);
  void closed(const std::string& session_id) { shown_.erase(session_id); }

  // False when `event` is not to be sent now: held (a notice or the slash commands of a session
  // the editor does not know yet), or the slash commands or title shown last.
  bool admit(const std::string& session_id, SessionEvent& event);

  // The config options (serialised) are shown: false when they are the ones shown last.
  bool show_config_options(const std::string& session_id, std::string options);

 private:
  struct Shown {
    bool opening = false;
    std::vector<SessionEvent> held;
    std::string commands;  // names, descriptions and hints of the slash commands
    std::string title;
    std::string config_options;
  };
  std::map<std::string, Shown, std::less<>> shown_;
};

}  // namespace runtime::server
