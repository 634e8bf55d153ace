#pragma once
// The hook engine (seed "Hook"; DESIGN §4, §6): load every `<config root>/hooks/*.yaml` and the
// enabled plugins' `hooks:` sections, validate them with `path:line:` diagnostics, and run the
// hooks matching an event as child processes, turning their exit codes and output into one
// HookOutcome for the agent loop.
//
// Threading: load_hooks and run_hooks are blocking and touch no shared state except the
// script cache directory (written atomically), so run_hooks may run on any worker thread,
// concurrently with other run_hooks calls on the same HookSet (which is immutable once loaded).
//
// How several matching hooks combine (the seed is silent; Claude Code's rules, made
// deterministic because ours run one after another, in order: hooks/*.yaml sorted by file name,
// then plugin hooks sorted by plugin name, each file in its written order):
//  - the first hook that blocks (exit 2, decision "block", permissionDecision "deny", a hook
//    error with on_failure: block, or a PreToolUse hook that could not run at all, unless its
//    on_failure is written allow) decides; the hooks after it do not run;
//  - `continue: false` ends the turn; the hooks after it do not run;
//  - updatedInput: each later PreToolUse hook receives the updated tool_input; the last one wins;
//  - permissionDecision "allow" from any hook is reported unless a later hook denies;
//  - additionalContext / plain-text context and systemMessage accumulate in order.
//
// What the agent loop does with a HookOutcome (seed + Claude Code where the seed is silent):
//  - PreToolUse   blocked: the tool does not run; `reason` is the tool result the model sees
//                 (mark the editor's tool call failed, naming decided_by_label). updated_input:
//                 run the tool with it (show the rewrite in the tool call). permission Allow:
//                 the hook pre-approved it (whether to skip session/request_permission is the
//                 loop's policy; Claude Code skips it).
//  - PostToolUse  blocked: the tool already ran; give the model `reason` with its result.
//  - UserPromptSubmit blocked: the prompt is not sent to the model; show `reason` to the user.
//  - Stop / SubagentStop blocked: do not end; continue with `reason` as the next instruction,
//                 and set stop_hook_active on the next Stop (cap the loop, e.g. Claude Code's 8).
//  - SessionStart / SubagentStart: never blocked (exit 2 / decision block are errors there).
//  - every event: additional_context → the model; system_messages → the user only; stop_turn →
//    end the turn now and show stop_reason; errors → show in the editor (each names file:line).
#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/config/diagnostic.hpp"
#include "runtime/hooks/plugin_hook_source.hpp"

namespace re2 {
class RE2;
}

namespace runtime::hooks {

namespace fs = std::filesystem;
using runtime::config::Diagnostics;

enum class HookEvent { SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SubagentStart, SubagentStop };

inline constexpr HookEvent kAllHookEvents[] = {HookEvent::SessionStart, HookEvent::UserPromptSubmit,
                                               HookEvent::PreToolUse,   HookEvent::PostToolUse,
                                               HookEvent::Stop,         HookEvent::SubagentStart,
                                               HookEvent::SubagentStop};

std::string_view to_string(HookEvent e);
std::optional<HookEvent> parse_hook_event(std::string_view name);
// Events on which a hook may block (exit 2 / decision block / deny). Not SessionStart, SubagentStart.
bool event_can_block(HookEvent e);
// Events on which `on_failure` may be written: PreToolUse, UserPromptSubmit.
bool event_allows_on_failure(HookEvent e);
// Events whose matcher is compared with something (SessionStart: source; Pre/PostToolUse:
// tool_name; SubagentStart/Stop: agent_type). On UserPromptSubmit and Stop it always matches.
bool event_has_matcher(HookEvent e);

// The names a matcher may use for a canonical tool name: itself plus the seed's aliases
// (bash: Bash; apply_patch: Write, Edit; read_file: Read; spawn_agent: Agent).
std::vector<std::string_view> tool_name_aliases(std::string_view canonical_tool);

class HookMatcher {
 public:
  enum class Kind { All, Exact, Regex };
  HookMatcher() = default;
  // Empty or "*": All. Only [A-Za-z0-9_|-]: exact names split on '|'. Otherwise an unanchored
  // RE2 (Go) regular expression; `error` is set when it does not compile.
  static HookMatcher parse(const std::string& text, std::string* error);

  Kind kind() const { return kind_; }
  const std::string& text() const { return text_; }
  bool matches(std::string_view value) const;

 private:
  Kind kind_ = Kind::All;
  std::string text_;
  std::vector<std::string> names_;
  std::shared_ptr<const re2::RE2> regex_;
};

// What a hook error does (a failure, a timeout, invalid output; or the hook could not run at all:
// not started, not found, not executable). Default: the call or prompt goes on, except that a
// PreToolUse hook that could not run at all blocks its tool call (a guard that never ran must not
// pass). Allow (written): every error lets it go on. Block (written): every error blocks.
enum class OnFailure { Default, Allow, Block };

// One configured hook (an entry of a matcher group's `hooks:` list).
struct Hook {
  HookEvent event = HookEvent::PreToolUse;
  HookMatcher matcher;
  std::optional<std::string> command;  // run as `bash -c <command>`
  std::optional<fs::path> script;      // absolute path of the source script
  std::vector<std::string> args;       // after the script, each shell-escaped
  std::chrono::milliseconds timeout{60000};  // `timeout` seconds, fractions allowed (1.5)
  OnFailure on_failure = OnFailure::Default;
  fs::path source_file;     // the hooks/*.yaml file or the plugin manifest
  int line = 0;             // line of this hook entry in source_file
  std::string plugin_name;  // empty for hooks/*.yaml
  fs::path plugin_root;     // set for plugin hooks: $OPENVAALA_PLUGIN_ROOT

  // "path:line", how errors and the editor name this hook.
  std::string location() const;
  // Short human label: the command, or the script's file name with its args.
  std::string label() const;
};

struct HookSet {
  std::vector<Hook> hooks;  // in run order
  bool empty() const { return hooks.empty(); }
  bool has(HookEvent e) const;
  std::size_t count(HookEvent e) const;
};

// Loads `<config_root>/hooks/*.yaml` (sorted by name; other files and dot files are ignored),
// then each plugin's hooks, plugins sorted by name. Every problem is appended to `diags` as
// `path:line: message`; an invalid hook (or matcher group with an invalid matcher) is left out
// of the returned set, valid ones are kept.
HookSet load_hooks(const fs::path& config_root, const std::vector<PluginHookSource>& plugins, Diagnostics& diags);

// load_hooks in its three steps, for a caller that spreads the reading over threads (the engine):
// load_hooks is list_hook_files, then load_hook_file on each file in that order, then
// load_plugin_hooks on each plugin sorted by name, all appending to one set and one `diags`.
std::vector<fs::path> list_hook_files(const fs::path& config_root, Diagnostics& diags);
void load_hook_file(const fs::path& file, HookSet& set, Diagnostics& diags);
void load_plugin_hooks(const PluginHookSource& plugin, HookSet& set, Diagnostics& diags);

// What the hook is told (stdin JSON) and matched against.
struct HookInput {
  std::string session_id;
  std::string turn_id;
  fs::path cwd;  // the session's working directory; also the hook's cwd
  // PreToolUse / PostToolUse
  std::string tool_name;  // canonical (bash, apply_patch, read_file, spawn_agent, mcp__x__y)
  boost::json::value tool_input = boost::json::object();
  std::string tool_use_id;
  boost::json::value tool_response = nullptr;  // PostToolUse
  // UserPromptSubmit
  std::string prompt;
  // SessionStart: "startup" or "resume"
  std::string source = "startup";
  // Stop / SubagentStop
  bool stop_hook_active = false;
  std::string last_assistant_message;
  // Inside a sub-agent, and on SubagentStart / SubagentStop (the sub-agent concerned).
  std::optional<std::string> agent_id;
  std::optional<std::string> agent_type;
};

// True when `hook` runs for this event and input (event equal and matcher matches; tool events
// also try the tool's aliases, so a hook runs at most once per call).
bool hook_matches(const Hook& hook, HookEvent event, const HookInput& input);

enum class PermissionDecision { None, Allow, Deny };

struct HookError {
  std::string hook;  // Hook::location(): "path:line"
  std::string message;
  bool could_not_run = false;  // not started, not found (127), not executable (126): it never ran
  std::string to_string() const { return hook + ": " + message; }
};

// One hook run, for the editor's display of what ran.
struct HookRunRecord {
  std::string hook;   // location
  std::string label;  // Hook::label()
  enum class Status { Ok, Blocked, Error, StoppedTurn } status = Status::Ok;
  std::optional<int> exit_code;
  bool timed_out = false;
  std::chrono::milliseconds duration{0};
  std::string message;  // block reason / error text / stop reason
};

struct HookOutcome {
  bool blocked = false;
  std::string reason;  // why it was blocked (what the model or user is told)
  PermissionDecision permission = PermissionDecision::None;  // PreToolUse
  std::string permission_reason;
  std::optional<boost::json::value> updated_input;  // PreToolUse: the tool's new arguments
  std::vector<std::string> additional_context;      // for the model, in order
  bool stop_turn = false;                           // continue: false
  std::string stop_reason;
  std::vector<std::string> system_messages;  // for the user, not the model
  std::vector<HookError> errors;
  // The hook whose answer decided the block / stop / permission (location and label), for display.
  std::optional<std::string> decided_by;
  std::optional<std::string> decided_by_label;
  std::vector<HookRunRecord> runs;  // every hook that ran, in order
  bool any_ran() const { return !runs.empty(); }
};

// Where the hooks run when it is not this machine (DESIGN §10: the executor of the event),
// prepared by the caller: the scripts and plugin folders already copied there.
struct HookPlace {
  std::string executor;  // its id, for messages
  // Why no hook can run there (a virtual executor, an unreachable host); set: each hook fails with it.
  std::string refusal;
  // argv of the local process that runs a command line there (Executor::launch_argv).
  std::function<std::vector<std::string>(const std::string& command_line,
                                         const std::vector<std::pair<std::string, std::string>>& env)>
      launch;
  std::map<fs::path, std::string> scripts;       // script → its copy there
  std::map<fs::path, std::string> plugin_roots;  // plugin folder → its copy there
  std::map<fs::path, std::string> copy_errors;   // script or plugin folder → why it is not there
};
// The script cache's place for `script` under the cache root: hooks/<hash>/<file name>.
std::string script_cache_name(const fs::path& script);

// Runs every hook of `set` matching (event, input), one after another (BLOCKING: call it on a
// worker thread). `cancel`, when set, kills the running hook's process group and stops.
// `place`: run them there instead of on this machine.
HookOutcome run_hooks(const HookSet& set, HookEvent event, const HookInput& input,
                      const std::atomic<bool>* cancel = nullptr, const HookPlace* place = nullptr);

}  // namespace runtime::hooks
