// Running hooks: the script cache, the child process, and turning exit code + output into answers.
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <sstream>
#include <thread>

#include "bridge/process/child_process.hpp"
#include "support/file_io.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/hooks/detail.hpp"

namespace runtime::hooks {

namespace json = boost::json;

namespace {

constexpr std::size_t kOutputCap = 64 * 1024;  // seed: stdout and stderr are each cut at 64 KB

std::string rtrim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

std::string_view ltrim(std::string_view s) {
  while (!s.empty() && (s.front() == '\n' || s.front() == '\r' || s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  return s;
}

std::string brief(const std::string& s, std::size_t max = 500) {
  std::string t = rtrim(s);
  if (t.size() > max) t = t.substr(0, max) + "…";
  return t;
}


std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string script_cache_name(const fs::path& script) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(script.string())));
  return "hooks/" + std::string(hex) + "/" + script.filename().string();
}

namespace detail {

std::optional<fs::path> cache_script(const fs::path& script, const fs::path& cache_root, std::string* error) {
  auto fail = [&](const std::string& msg) -> std::optional<fs::path> {
    if (error) *error = msg;
    return std::nullopt;
  };
  struct stat src_st {};
  if (::stat(script.c_str(), &src_st) != 0) return fail("script " + script.string() + " no longer exists");
  auto script_text = support::read_file(script);
  if (!script_text) return fail("cannot read script " + script.string());
  const std::string& content = *script_text;
  const mode_t mode = src_st.st_mode & 07777;

  const fs::path dest = cache_root / script_cache_name(script);
  const fs::path dir = dest.parent_path();

  struct stat dst_st {};
  if (::stat(dest.c_str(), &dst_st) == 0 && S_ISREG(dst_st.st_mode) && (dst_st.st_mode & 07777) == mode &&
      static_cast<std::size_t>(dst_st.st_size) == content.size()) {
    if (auto cached = support::read_file(dest); cached && *cached == content) return dest;
  }

  std::error_code ec;
  runtime::config::create_private_directories(dir, ec);
  if (ec) return fail("cannot create the script cache " + dir.string() + ": " + ec.message());
  // The one atomic writer: a private temporary file renamed over the copy, so a concurrent run
  // of the old copy keeps its inode, and nobody ever executes a half-written file.
  try {
    support::write_file_atomically(dest, content, mode);
  } catch (const std::exception& e) {
    return fail(std::string("cannot update the script cache: ") + e.what());
  }
  return dest;
}

namespace {
// A hook timeout as written in messages: "1", "1.5", "0.25" (seconds).
std::string seconds_text(std::chrono::milliseconds d) {
  const long long ms = d.count();
  std::string out = std::to_string(ms / 1000);
  if (ms % 1000 != 0) {
    std::string frac = std::to_string(1000 + ms % 1000).substr(1);  // "500" / "050" / "005"
    while (frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  return out;
}
HookAnswer hook_error(std::string msg) {
  HookAnswer e;
  e.error = true;
  e.error_message = std::move(msg);
  return e;
}

// bash's own codes for a command it could not run: 127 not found (the script, its interpreter),
// 126 found but not executable. The hook never ran; a guard must not count that as a pass.
HookAnswer hook_not_run(std::string msg) {
  HookAnswer e = hook_error(std::move(msg));
  e.could_not_run = true;
  return e;
}

std::string stderr_suffix(const HookProcessResult& r) {
  return r.stderr_data.empty() ? std::string() : ": " + brief(r.stderr_data);
}

// What the way the hook ended decides: not started, timed out, killed, not run, blocked (exit 2)
// or failed. nullopt for exit 0: then its stdout decides.
std::optional<HookAnswer> answer_from_exit(HookEvent event, const HookProcessResult& r, std::chrono::milliseconds timeout) {
  HookAnswer a;
  if (!r.spawn_error.empty()) return hook_not_run("could not start: " + r.spawn_error);
  if (r.timed_out) return hook_error("timed out after " + seconds_text(timeout) + " s");
  if (!r.exit_code) return hook_error("was killed by signal " + std::to_string(r.term_signal.value_or(0)));
  const int code = *r.exit_code;
  if (code == 127 || code == 126)
    return hook_not_run("could not run (exit " + std::to_string(code) + ": " +
                        (code == 127 ? "not found" : "not executable") + ")" + stderr_suffix(r));
  if (code == 2) {
    if (!event_can_block(event))
      return hook_error("exited with code 2, but " + std::string(to_string(event)) + " hooks cannot block" +
                        stderr_suffix(r));
    a.block = true;
    a.block_reason = rtrim(r.stderr_data);
    return a;
  }
  if (code != 0)
    return hook_error("exited with code " + std::to_string(code) + stderr_suffix(r));
  return std::nullopt;
}

// The JSON a hook printed on stdout, read into `a`; what is wrong in it goes to `problems`.
struct HookOutputReader {
  HookEvent event;
  HookAnswer& a;
  std::vector<std::string> problems;

  bool get_string(const json::object& from, const char* key, std::string& dst, const std::string& where) {
    auto it = from.find(key);
    if (it == from.end() || it->value().is_null()) return false;
    if (!it->value().is_string()) {
      problems.push_back(where + key + " must be a string");
      return false;
    }
    dst = std::string(it->value().as_string());
    return true;
  }

  void read(const json::object& o) {
    read_common(o);
    read_decision(o);
    if (auto it = o.find("hookSpecificOutput"); it != o.end() && !it->value().is_null()) {
      if (!it->value().is_object()) problems.push_back("hookSpecificOutput must be an object");
      else read_specific(it->value().as_object());
    }
  }

  // continue, stopReason, systemMessage, additionalContext.
  void read_common(const json::object& o) {
    if (auto it = o.find("continue"); it != o.end() && !it->value().is_null()) {
      if (!it->value().is_bool()) problems.push_back("continue must be true or false");
      else if (!it->value().as_bool()) a.stop_turn = true;
    }
    get_string(o, "stopReason", a.stop_reason, "");
    if (std::string msg; get_string(o, "systemMessage", msg, "")) a.system_message = msg;
    if (std::string ctx; get_string(o, "additionalContext", ctx, "") && !ctx.empty()) a.additional_context.push_back(ctx);
  }

  // "decision": "block", with its "reason", on an event that can block.
  void read_decision(const json::object& o) {
    auto it = o.find("decision");
    if (it == o.end() || it->value().is_null()) return;
    if (!it->value().is_string() || it->value().as_string() != "block") {
      problems.push_back("decision must be \"block\"");
    } else if (!event_can_block(event)) {
      problems.push_back("decision \"block\" is not possible on " + std::string(to_string(event)));
    } else {
      a.block = true;
      get_string(o, "reason", a.block_reason, "");
    }
  }

  // hookSpecificOutput: additionalContext; for PreToolUse the permission decision and updatedInput.
  void read_specific(const json::object& h) {
    if (std::string ctx; get_string(h, "additionalContext", ctx, "hookSpecificOutput.") && !ctx.empty())
      a.additional_context.push_back(ctx);
    if (event != HookEvent::PreToolUse) return;
    std::string decision, reason;
    const bool has_decision = get_string(h, "permissionDecision", decision, "hookSpecificOutput.");
    get_string(h, "permissionDecisionReason", reason, "hookSpecificOutput.");
    if (has_decision) read_permission(decision, reason);
    if (auto u = h.find("updatedInput"); u != h.end() && !u->value().is_null()) {
      if (!u->value().is_object()) problems.push_back("hookSpecificOutput.updatedInput must be an object (the tool's arguments)");
      else a.updated_input = u->value();
    }
  }

  // "deny" blocks the call with the reason; "allow" answers the permission question.
  void read_permission(const std::string& decision, const std::string& reason) {
    if (decision == "deny") {
      a.permission = PermissionDecision::Deny;
      a.block = true;
      a.block_reason = reason;
      a.permission_reason = reason;
    } else if (decision == "allow") {
      a.permission = PermissionDecision::Allow;
      a.permission_reason = reason;
    } else if (decision == "ask" || decision == "defer") {
      problems.push_back("permissionDecision \"" + decision + "\" is not supported (use \"allow\" or \"deny\")");
    } else {
      problems.push_back("permissionDecision must be \"allow\" or \"deny\", not \"" + decision + "\"");
    }
  }
};

}  // namespace

HookAnswer interpret_hook_result(HookEvent event, const HookProcessResult& r, std::chrono::milliseconds timeout) {
  if (auto decided = answer_from_exit(event, r, timeout)) return std::move(*decided);
  HookAnswer a;
  const std::string_view out = ltrim(r.stdout_data);
  if (out.empty()) return a;
  if (out.front() != '{') {
    if (event == HookEvent::SessionStart || event == HookEvent::SubagentStart || event == HookEvent::UserPromptSubmit)
      a.additional_context.push_back(rtrim(r.stdout_data));
    return a;
  }
  json::error_code ec;
  json::value v = json::parse(out, ec);
  if (ec) return hook_error("printed invalid JSON on stdout: " + ec.message());
  if (!v.is_object()) return hook_error("printed invalid JSON on stdout: not an object");
  HookOutputReader reader{event, a, {}};
  reader.read(v.as_object());
  if (!reader.problems.empty()) {
    std::string msg = "printed invalid output: ";
    for (std::size_t i = 0; i < reader.problems.size(); ++i) msg += (i ? "; " : "") + reader.problems[i];
    return hook_error(msg);
  }
  return a;
}

}  // namespace detail

using namespace detail;

namespace {

// On this machine: bash -c, in the session's folder; a script from the local cache.
bridge::process::ProcessSpec local_spec(const Hook& hook, fs::path& cache_root, std::string& error) {
  bridge::process::ProcessSpec spec;
  std::string line;
  if (hook.command) {
    line = *hook.command;
  } else {
    if (cache_root.empty()) cache_root = runtime::config::cache_dir();
    auto cached = cache_script(*hook.script, cache_root, &error);
    if (!cached) return spec;
    line = shell_quote(cached->string());
    for (const auto& a : hook.args) line += " " + shell_quote(a);
  }
  spec.argv = {"bash", "-c", line};
  if (!hook.plugin_root.empty()) spec.env_overlay.emplace_back("OPENVAALA_PLUGIN_ROOT", hook.plugin_root.string());
  return spec;
}

// On an executor: its launcher (ssh), the script and plugin folder as copied there beforehand.
bridge::process::ProcessSpec remote_spec(const Hook& hook, const HookPlace& place, std::string& error) {
  bridge::process::ProcessSpec spec;
  auto missing = [&](const fs::path& p) {
    auto e = place.copy_errors.find(p);
    error = e != place.copy_errors.end() ? e->second : p.string() + " was not copied to executor '" + place.executor + "'";
  };
  if (!place.refusal.empty()) {
    error = place.refusal;
    return spec;
  }
  std::string line;
  if (hook.command) {
    line = *hook.command;
  } else if (auto it = place.scripts.find(*hook.script); it != place.scripts.end()) {
    line = shell_quote(it->second);
    for (const auto& a : hook.args) line += " " + shell_quote(a);
  } else {
    missing(*hook.script);
    return spec;
  }
  std::vector<std::pair<std::string, std::string>> env;
  if (!hook.plugin_root.empty()) {
    auto it = place.plugin_roots.find(hook.plugin_root);
    if (it == place.plugin_roots.end()) {
      missing(hook.plugin_root);
      return spec;
    }
    env.emplace_back("OPENVAALA_PLUGIN_ROOT", it->second);
  }
  try {
    spec.argv = place.launch(line, env);
  } catch (const std::exception& e) {
    error = e.what();
  }
  return spec;
}

// Whether a hook error blocks (hooks.hpp, OnFailure): a written on_failure: block always; by
// default, a PreToolUse hook that could not run at all (fail closed: the guard never looked).
bool error_blocks(const Hook& hook, HookEvent event, const HookAnswer& a) {
  if (!event_allows_on_failure(event)) return false;
  if (hook.on_failure == OnFailure::Block) return true;
  return hook.on_failure == OnFailure::Default && a.could_not_run && event == HookEvent::PreToolUse;
}

void set_decided_by(HookOutcome& out, const HookRunRecord& rec) {
  out.decided_by = rec.hook;
  out.decided_by_label = rec.label;
}

// Blocked by this hook with `reason`; on PreToolUse that denies the call.
void block_by(HookEvent event, std::string reason, const HookRunRecord& rec, HookOutcome& out) {
  out.blocked = true;
  out.reason = std::move(reason);
  if (event == HookEvent::PreToolUse) {
    out.permission = PermissionDecision::Deny;
    out.permission_reason = out.reason;
  }
  set_decided_by(out, rec);
}

// The hook's process (here, or at `place`), the event's JSON on its stdin; false when cancelled.
bool run_hook_process(const Hook& hook, const HookPlace* place, const HookInput& input, const json::object& stdin_obj,
                      const std::atomic<bool>* cancel, fs::path& cache_root, HookProcessResult& pr) {
  bridge::process::ProcessSpec spec = place ? remote_spec(hook, *place, pr.spawn_error) : local_spec(hook, cache_root, pr.spawn_error);
  if (!pr.spawn_error.empty()) return true;
  if (!place) spec.cwd = input.cwd.string();  // there: the launcher enters its working directory
  spec.stdin_data = json::serialize(stdin_obj) + "\n";
  spec.timeout = hook.timeout;
  spec.max_output_bytes = kOutputCap;
  auto res = bridge::process::run_process(spec, cancel);
  if (res.cancelled) return false;
  if (!res.started) pr.spawn_error = res.spawn_error;
  pr.exit_code = res.exit_code;
  pr.term_signal = res.term_signal;
  pr.timed_out = res.timed_out;
  pr.stdout_data = std::move(res.stdout_data);
  pr.stderr_data = std::move(res.stderr_data);
  return true;
}

// A hook error: logged and recorded; true when it blocks (error_blocks), which ends the chain.
bool take_error(const Hook& hook, HookEvent event, const HookAnswer& a, HookRunRecord& rec, HookOutcome& out) {
  spdlog::warn("hook {} ({}) failed: {}", rec.hook, to_string(event), a.error_message);
  out.errors.push_back({rec.hook, a.error_message, a.could_not_run});
  rec.status = HookRunRecord::Status::Error;
  rec.message = a.error_message;
  out.runs.push_back(rec);
  if (!error_blocks(hook, event, a)) return false;
  block_by(event,
           hook.on_failure == OnFailure::Block
               ? "hook " + rec.label + " failed (" + a.error_message + "), and its on_failure is block"
               : "hook " + rec.label + " " + a.error_message + ", so the tool call is blocked",
           rec, out);
  return true;
}

// What the hook answered: messages, context, rewritten input, an allow, then a block or the end
// of the turn; true when the chain stops.
bool take_answer(HookEvent event, HookAnswer& a, HookRunRecord& rec, HookOutcome& out, json::object& stdin_obj) {
  if (a.system_message) out.system_messages.push_back(*a.system_message);
  for (auto& c : a.additional_context) out.additional_context.push_back(std::move(c));
  if (a.updated_input && event == HookEvent::PreToolUse) {
    out.updated_input = *a.updated_input;
    stdin_obj["tool_input"] = *a.updated_input;  // later hooks see the rewritten arguments
    if (!out.decided_by) set_decided_by(out, rec);
  }
  if (a.permission == PermissionDecision::Allow && out.permission == PermissionDecision::None) {
    out.permission = PermissionDecision::Allow;
    out.permission_reason = a.permission_reason;
    if (!out.decided_by) set_decided_by(out, rec);
  }
  bool stop = false;
  if (a.block) {
    block_by(event, rtrim(a.block_reason).empty() ? "blocked by hook " + rec.label + " (" + rec.hook + ")" : a.block_reason,
             rec, out);
    rec.status = HookRunRecord::Status::Blocked;
    rec.message = out.reason;
    stop = true;
  }
  if (a.stop_turn) {
    out.stop_turn = true;
    out.stop_reason = a.stop_reason;
    if (!a.block) {
      set_decided_by(out, rec);
      rec.status = HookRunRecord::Status::StoppedTurn;
      rec.message = a.stop_reason;
    }
    stop = true;
  }
  return stop;
}

}  // namespace

HookOutcome run_hooks(const HookSet& set, HookEvent event, const HookInput& input, const std::atomic<bool>* cancel,
                      const HookPlace* place) {
  HookOutcome out;
  if (!set.has(event)) return out;
  json::object stdin_obj = hook_stdin_json(event, input);
  fs::path cache_root;

  for (const Hook& hook : set.hooks) {
    if (!hook_matches(hook, event, input)) continue;
    if (cancel && cancel->load()) break;
    const auto started = std::chrono::steady_clock::now();
    HookRunRecord rec;
    rec.hook = hook.location();
    rec.label = hook.label();
    HookProcessResult pr;
    const bool finished = run_hook_process(hook, place, input, stdin_obj, cancel, cache_root, pr);
    rec.duration = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    if (!finished) {
      rec.status = HookRunRecord::Status::Error;
      rec.message = "cancelled";
      out.runs.push_back(std::move(rec));
      break;
    }
    rec.exit_code = pr.exit_code;
    rec.timed_out = pr.timed_out;
    if (!pr.stderr_data.empty() && pr.exit_code == 0)
      spdlog::info("hook {} ({}) stderr: {}", rec.hook, to_string(event), brief(pr.stderr_data, 2000));

    HookAnswer a = interpret_hook_result(event, pr, hook.timeout);
    if (a.error) {
      if (take_error(hook, event, a, rec, out)) break;
      continue;
    }
    const bool stop = take_answer(event, a, rec, out, stdin_obj);
    out.runs.push_back(std::move(rec));
    if (stop) break;
  }
  return out;
}

}  // namespace runtime::hooks
