// Hook events and their rules, matchers, which hooks run for an input, and what a hook is told
// on stdin: the parts of the hook engine shared by loading and running.
#include <re2/re2.h>

#include "runtime/hooks/detail.hpp"

namespace runtime::hooks {

std::string_view to_string(HookEvent e) {
  switch (e) {
    case HookEvent::SessionStart: return "SessionStart";
    case HookEvent::UserPromptSubmit: return "UserPromptSubmit";
    case HookEvent::PreToolUse: return "PreToolUse";
    case HookEvent::PostToolUse: return "PostToolUse";
    case HookEvent::Stop: return "Stop";
    case HookEvent::SubagentStart: return "SubagentStart";
    case HookEvent::SubagentStop: return "SubagentStop";
  }
  return "?";
}

std::optional<HookEvent> parse_hook_event(std::string_view name) {
  for (HookEvent e : kAllHookEvents)
    if (to_string(e) == name) return e;
  return std::nullopt;
}

bool event_can_block(HookEvent e) { return e != HookEvent::SessionStart && e != HookEvent::SubagentStart; }

bool event_allows_on_failure(HookEvent e) { return e == HookEvent::PreToolUse || e == HookEvent::UserPromptSubmit; }

bool event_has_matcher(HookEvent e) { return e != HookEvent::UserPromptSubmit && e != HookEvent::Stop; }

std::vector<std::string_view> tool_name_aliases(std::string_view canonical) {
  if (canonical == "bash") return {"bash", "Bash"};
  if (canonical == "apply_patch") return {"apply_patch", "Write", "Edit"};
  if (canonical == "read_file") return {"read_file", "Read"};
  if (canonical == "spawn_agent") return {"spawn_agent", "Agent"};
  return {canonical};
}

static bool is_exact_list(const std::string& s) {
  for (unsigned char c : s) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '|' ||
              c == '-';
    if (!ok) return false;
  }
  return true;
}

HookMatcher HookMatcher::parse(const std::string& text, std::string* error) {
  HookMatcher m;
  m.text_ = text;
  if (text.empty() || text == "*") {
    m.kind_ = Kind::All;
    return m;
  }
  if (is_exact_list(text)) {
    m.kind_ = Kind::Exact;
    std::size_t start = 0;
    while (start <= text.size()) {
      auto bar = text.find('|', start);
      std::string piece = text.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
      if (!piece.empty()) m.names_.push_back(piece);
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    return m;
  }
  m.kind_ = Kind::Regex;
  RE2::Options opts;  // RE2's default syntax is Go's regexp syntax
  opts.set_log_errors(false);
  auto re = std::make_shared<const RE2>(text, opts);
  if (!re->ok()) {
    if (error) *error = re->error();
    return m;
  }
  m.regex_ = std::move(re);
  return m;
}

bool HookMatcher::matches(std::string_view value) const {
  switch (kind_) {
    case Kind::All: return true;
    case Kind::Exact:
      for (const auto& n : names_)
        if (n == value) return true;
      return false;
    case Kind::Regex: return regex_ && RE2::PartialMatch(re2::StringPiece(value.data(), value.size()), *regex_);
  }
  return false;
}

std::string Hook::location() const { return source_file.string() + ":" + std::to_string(line); }

std::string Hook::label() const {
  if (command) return *command;
  std::string out = script ? script->filename().string() : std::string("?");
  for (const auto& a : args) out += " " + detail::shell_quote(a);
  return out;
}

bool HookSet::has(HookEvent e) const { return count(e) > 0; }

std::size_t HookSet::count(HookEvent e) const {
  std::size_t n = 0;
  for (const auto& h : hooks) n += h.event == e;
  return n;
}

bool hook_matches(const Hook& hook, HookEvent event, const HookInput& in) {
  if (hook.event != event) return false;
  switch (event) {
    case HookEvent::UserPromptSubmit:
    case HookEvent::Stop: return true;
    case HookEvent::SessionStart: return hook.matcher.matches(in.source);
    case HookEvent::SubagentStart:
    case HookEvent::SubagentStop: return hook.matcher.matches(in.agent_type.value_or(""));
    case HookEvent::PreToolUse:
    case HookEvent::PostToolUse:
      for (auto name : tool_name_aliases(in.tool_name))
        if (hook.matcher.matches(name)) return true;
      return false;
  }
  return false;
}

namespace detail {

boost::json::object hook_stdin_json(HookEvent event, const HookInput& in) {
  boost::json::object o;
  o["hook_event_name"] = to_string(event);
  o["session_id"] = in.session_id;
  o["turn_id"] = in.turn_id;
  o["cwd"] = in.cwd.string();
  switch (event) {
    case HookEvent::SessionStart: o["source"] = in.source; break;
    case HookEvent::UserPromptSubmit: o["prompt"] = in.prompt; break;
    case HookEvent::PreToolUse:
    case HookEvent::PostToolUse:
      o["tool_name"] = in.tool_name;
      o["tool_input"] = in.tool_input;
      o["tool_use_id"] = in.tool_use_id;
      if (event == HookEvent::PostToolUse) o["tool_response"] = in.tool_response;
      break;
    case HookEvent::Stop:
    case HookEvent::SubagentStop:
      o["stop_hook_active"] = in.stop_hook_active;
      o["last_assistant_message"] = in.last_assistant_message;
      break;
    case HookEvent::SubagentStart: break;
  }
  if (in.agent_id) o["agent_id"] = *in.agent_id;
  if (in.agent_type) o["agent_type"] = *in.agent_type;
  return o;
}

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += "'";
  return out;
}

}  // namespace detail

}  // namespace runtime::hooks
