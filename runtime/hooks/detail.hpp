#pragma once
// The hook engine's internals, shared by its own .cpp files and the tests (not by the rest of
// the program): the stdin object, what one hook process's result means, the script cache and
// shell quoting.
#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/hooks/hooks.hpp"

namespace runtime::hooks::detail {

// The stdin object for one event: hook_event_name, session_id, turn_id, cwd, plus the event's
// own fields (agent_id / agent_type when set).
boost::json::object hook_stdin_json(HookEvent event, const HookInput& input);

// The decision logic alone, a pure function of what one hook process did. `timed_out` or
// `spawn_error` non-empty means no exit code. Used by run_hooks and by tests.
struct HookProcessResult {
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  bool timed_out = false;
  std::string spawn_error;
  std::string stdout_data;
  std::string stderr_data;
};
struct HookAnswer {
  bool error = false;
  std::string error_message;
  bool could_not_run = false;  // an error before the hook ran: not started, exit 127 or 126
  bool block = false;
  std::string block_reason;  // may be empty: the caller supplies a default
  PermissionDecision permission = PermissionDecision::None;
  std::string permission_reason;
  std::optional<boost::json::value> updated_input;
  std::vector<std::string> additional_context;
  bool stop_turn = false;
  std::string stop_reason;
  std::optional<std::string> system_message;
};
HookAnswer interpret_hook_result(HookEvent event, const HookProcessResult& r, std::chrono::milliseconds timeout);

// Copies `script` to `<cache_root>/hooks/<hash of its path>/<file name>` unless an identical
// copy (same content and mode) is there; returns the copy's path, or nullopt with `error`.
std::optional<fs::path> cache_script(const fs::path& script, const fs::path& cache_root, std::string* error);
// POSIX shell single-quote escaping.
std::string shell_quote(std::string_view s);

}  // namespace runtime::hooks::detail
