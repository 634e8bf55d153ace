// `openvaala config check [--cwd DIR] [--json]`.
#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdlib.h>
#include <filesystem>
#include <string>
#include <vector>

#include "bridge/process/sandbox.hpp"
#include "runtime/config/credentials.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/executors/executors.hpp"
#include "runtime/providers/model_provider.hpp"

namespace app {

namespace fs = std::filesystem;
namespace json = boost::json;
namespace eng = runtime::engine;
using runtime::config::Diagnostic;
using runtime::config::Diagnostics;

namespace {

int usage(const std::string& msg) {
  std::fprintf(stderr, "openvaala: %s\nUsage: openvaala config check [--cwd DIR] [--json] [--executor ID]\n", msg.c_str());
  return 2;
}

// The model a session in this directory would use, and where that choice comes from.
std::string model_line(const eng::Engine& e, const eng::Agent& a, std::string& from) {
  using From = runtime::providers::ModelChoice::From;
  auto choice = runtime::providers::choose_model(e.main_config(), a.model);
  switch (choice.from) {
    case From::Agent: from = a.file.empty() ? "agent" : a.file.string(); break;
    case From::Environment: from = "$OPENVAALA_MODEL"; break;
    case From::ConfigFile: from = e.main_config().file.string(); break;
    case From::None: from = ""; break;
  }
  return choice.model;
}

// Whether that model can be used as configured: where its API key comes from, or what is
// missing (the message a prompt would fail with). Never the key itself.
struct KeyStatus {
  std::string source;   // "$VAR" or the credentials.yaml path; empty when no key is used
  std::string problem;  // empty when the model resolves
};
KeyStatus key_status(const eng::Engine& e, const eng::Agent& a) {
  try {
    return {runtime::providers::resolve_model(e.main_config(), a.model).api_key_source, ""};
  } catch (const runtime::providers::ModelError& err) {
    return {"", err.what()};
  }
}

// No model can answer a session here: a problem, saying how to fix it, in the file the model comes
// from (config.yaml when none is set). A warning: the files load, and `openvaala login` or a key fixes it.
std::optional<Diagnostic> model_diagnostic(const eng::Engine& e, const std::string& model_from, const KeyStatus& key) {
  if (key.problem.empty() || e.failed()) return std::nullopt;
  fs::path config_file = e.main_config().file;
  if (config_file.empty()) config_file = runtime::config::config_root() / "config.yaml";
  return Diagnostic{Diagnostic::Severity::Warning, model_from.empty() ? config_file.string() : model_from, 0, key.problem};
}

std::string server_summary(const eng::McpServerConfig& s) {
  std::string out(eng::transport_name(s.transport));
  if (s.transport == eng::McpServerConfig::Transport::Stdio) {
    out += "  " + s.command;
    for (const auto& a : s.args) out += " " + a;
  } else {
    out += "  " + s.url;
  }
  return out;
}

// The command sandbox as config.yaml and this kernel make it (README "Sandbox").
std::string sandbox_summary(runtime::config::SandboxSetting setting) {
  namespace sandbox = bridge::process::sandbox;
  using S = runtime::config::SandboxSetting;
  if (setting == S::Off) return "off: commands on local run unconfined";
  const std::string when = setting == S::Always ? "in every mode" : "in every mode but Full auto";
  const int abi = sandbox::landlock_abi();
  if (abi < 0)
    return "on " + when + ", but " + sandbox::unavailable_reason(abi) +
           ": commands on local are refused (set 'sandbox: off' to run them unconfined)";
  return "on " + when + " (Landlock ABI " + std::to_string(abi) + "); commands on ssh and container executors are not sandboxed";
}

std::string executor_summary(const runtime::config::ExecutorConfig& x) {
  using T = runtime::config::ExecutorConfig::Type;
  if (x.type == T::Virtual) return "virtual  " + x.root.string() + (x.read_only ? "  read-only" : "");
  const std::string workdir = "  workdir " + (x.workdir.empty() ? std::string("~") : x.workdir);
  if (x.type == T::Container || x.type == T::Devcontainer)
    return std::string(runtime::config::executor_type_name(x.type)) + "  " + (x.engine.empty() ? "podman (else docker)" : x.engine) +
           (x.image.empty() ? "  container " + x.container : "  image " + x.image) + (x.user ? "  user " + *x.user : "") + workdir;
  return "ssh  " + (x.user ? *x.user + "@" : "") + x.host + (x.port ? ":" + std::to_string(*x.port) : "") + workdir;
}

json::object executor_json(const runtime::config::ExecutorConfig& x) {
  using T = runtime::config::ExecutorConfig::Type;
  json::object o{{"id", x.id}, {"type", runtime::config::executor_type_name(x.type)}, {"file", x.file.string()}};
  if (x.type == T::Virtual) {
    o["root"] = x.root.string();
    o["read_only"] = x.read_only;
    return o;
  }
  if (x.user) o["user"] = *x.user;
  o["workdir"] = x.workdir;
  if (x.type == T::Ssh) {
    o["host"] = x.host;
    if (x.port) o["port"] = *x.port;
    return o;
  }
  o["engine"] = x.engine.empty() ? "auto" : x.engine;
  o[x.image.empty() ? "container" : "image"] = x.image.empty() ? x.container : x.image;
  if (!x.folder.empty()) o["folder"] = x.folder.string();
  return o;
}

// Connects to an ssh or container executor now (an ssh one through a private socket folder).
runtime::executors::Probe probe_now(const runtime::config::ExecutorConfig& x) {
  if (x.type != runtime::config::ExecutorConfig::Type::Ssh) return runtime::executors::probe_container(x);
  std::string tmpl = (fs::temp_directory_path() / "openvaala-check-XXXXXX").string();
  fs::path dir = ::mkdtemp(tmpl.data()) ? fs::path(tmpl) : fs::temp_directory_path();
  auto p = runtime::executors::probe_ssh(x, dir);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return p;
}

// `--executor ID`: connects now and says what is there, or exactly why not.
json::object probe_json(const eng::Engine& e, const std::string& id, std::string& text, bool& ok) {
  json::object o{{"id", id}};
  ok = false;
  if (id == runtime::config::kLocalExecutor || id == runtime::config::kOpenvaalaExecutor) {
    ok = true;
    o["reachable"] = true;
    text = "Executor " + id + ": built in (nothing to connect to)\n";
    return o;
  }
  auto it = e.executors().find(id);
  if (it == e.executors().end()) {
    std::string ids = "local, openvaala";
    for (const auto& [x, _] : e.executors()) ids += ", " + x;
    o["reachable"] = false;
    o["error"] = "there is no executor '" + id + "' (available: " + ids + ")";
    text = "Executor " + id + ": " + std::string(o["error"].as_string()) + "\n";
    return o;
  }
  const auto& x = it->second;
  if (x.type == runtime::config::ExecutorConfig::Type::Virtual) {
    ok = fs::is_directory(x.root);
    o["reachable"] = ok;
    o["root"] = x.root.string();
    text = "Executor " + id + ": virtual, root " + x.root.string() + (ok ? " (a folder)\n" : " is not a folder\n");
    return o;
  }
  const auto p = probe_now(x);
  o["reachable"] = p.reachable;
  char ms[64];
  std::snprintf(ms, sizeof ms, "%.1f", p.connect_ms);
  o["connect_ms"] = p.connect_ms;
  if (!p.reachable) {
    o["error"] = p.error;
    text = "Executor " + id + ": not reachable\n  " + p.error + "\n";
    return o;
  }
  ok = p.has_bash;
  o["working_directory"] = p.working_directory;
  o["bash"] = p.has_bash;
  o["tar"] = p.has_tar;
  o["round_trip_ms"] = p.round_trip_ms;
  char rt[64];
  std::snprintf(rt, sizeof rt, "%.1f", p.round_trip_ms);
  text = "Executor " + id + ": reachable (" + executor_summary(x) + ")\n  connected in " + ms + " ms; round trip " + rt +
         " ms\n  working directory: " + p.working_directory + "\n  bash: " + (p.has_bash ? "yes" : "NOT FOUND (bash cannot run there)") +
         "\n  tar: " + (p.has_tar ? "yes" : "not found (plugin folders cannot be copied there)") + "\n";
  o["helper"] = p.helper;
  text += "  helper: " + p.helper + "\n";
  return o;
}

json::object diag_json(const Diagnostic& d) {
  return json::object{{"severity", d.severity == Diagnostic::Severity::Error ? "error" : "warning"},
                      {"path", d.path},
                      {"line", d.line},
                      {"message", d.message},
                      {"text", d.to_string()}};
}

json::object skill_json(const eng::Skill& s) {
  json::object o{{"name", s.name},
                 {"description", s.description},
                 {"path", s.file.string()},
                 {"source", eng::source_id(s.source)},
                 {"source_label", eng::source_label(s.source)}};
  if (!s.plugin.empty()) o["plugin"] = s.plugin;
  return o;
}

json::array string_array(const std::vector<std::string>& items) {
  json::array out;
  for (const auto& x : items) out.push_back(json::value(x));
  return out;
}

json::value string_or_null(const std::string& s) { return s.empty() ? json::value(nullptr) : json::value(s); }

bool used_by_agent(const eng::McpServerConfig& s, const eng::SessionView& view) {
  bool used = false;
  for (const auto& v : view.mcp_servers) used = used || v.id == s.id;
  return used;
}

// What the command line asks for; `exit_code` is set when it is answered already (usage, help).
struct CheckOptions {
  fs::path cwd = fs::current_path();
  bool as_json = false;
  std::optional<std::string> probe_id;
  std::optional<int> exit_code;
};

CheckOptions parse_check_args(const std::vector<std::string>& args) {
  CheckOptions opt;
  auto stop = [&](int code) {
    opt.exit_code = code;
    return opt;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") opt.as_json = true;
    else if (args[i] == "--executor") {
      if (i + 1 >= args.size()) return stop(usage("--executor needs an executor id"));
      opt.probe_id = args[++i];
    } else if (args[i].rfind("--executor=", 0) == 0) opt.probe_id = args[i].substr(11);
    else if (args[i] == "--cwd") {
      if (i + 1 >= args.size()) return stop(usage("--cwd needs a directory"));
      opt.cwd = args[++i];
    } else if (args[i].rfind("--cwd=", 0) == 0) opt.cwd = args[i].substr(6);
    else if (args[i] == "-h" || args[i] == "--help") {
      std::fputs(
          "Usage: openvaala config check [--cwd DIR] [--json] [--executor ID]\n\n"
          "Loads every config source as a session in DIR (default: the current directory) would, prints what it\n"
          "found and every problem as path:line: message. Exit status 1 when there is an error.\n"
          "--executor ID also connects to that executor and reports what it found there (exit 1 when it cannot).\n",
          stdout);
      return stop(0);
    } else return stop(usage("unknown option for 'config check': " + args[i]));
  }
  std::error_code ec;
  opt.cwd = fs::absolute(opt.cwd, ec).lexically_normal();
  if (!fs::is_directory(opt.cwd, ec)) return stop(usage("--cwd: not a directory: " + opt.cwd.string()));
  return opt;
}

// Everything the check found, for either output.
struct CheckReport {
  fs::path root;
  fs::path cwd;
  std::shared_ptr<const eng::Engine> engine;
  eng::SessionView view;
  Diagnostics all;  // the engine's, the session's, credentials.yaml's and the model's problems
  bool errors = false;
  std::optional<std::string> probe_id;
  std::string probe_text;
  json::object probe;
  std::string model;
  std::string model_from;
  KeyStatus key;
};

CheckReport run_checks(const CheckOptions& opt) {
  CheckReport r;
  r.root = runtime::config::config_root();
  r.cwd = opt.cwd;
  Diagnostics diags;
  r.engine = eng::Engine::load(r.root, diags);
  r.view = r.engine->session_view(r.cwd);
  r.all = r.engine->diagnostics();
  r.all.insert(r.all.end(), r.view.diagnostics.begin(), r.view.diagnostics.end());
  runtime::config::load_credentials(r.root, r.all);  // only its problems: keys are never shown
  r.errors = runtime::config::has_errors(r.all);
  r.probe_id = opt.probe_id;
  if (r.probe_id) {
    bool probe_ok = false;
    r.probe = probe_json(*r.engine, *r.probe_id, r.probe_text, probe_ok);
    r.errors = r.errors || !probe_ok;
  }
  r.model = model_line(*r.engine, r.view.agent, r.model_from);
  r.key = key_status(*r.engine, r.view.agent);
  if (auto d = model_diagnostic(*r.engine, r.model_from, r.key)) r.all.push_back(std::move(*d));
  return r;
}

// ---- --json ----

json::object mcp_server_json(const eng::McpServerConfig& s, const eng::SessionView& view) {
  json::object o{{"id", s.id},
                 {"type", eng::transport_name(s.transport)},
                 {"source", s.source_file.string()},
                 {"line", s.source_line},
                 {"disabled", s.disabled},
                 {"required", s.required},
                 {"startup_timeout_seconds", s.startup_timeout_seconds},
                 {"tool_timeout_seconds", s.tool_timeout_seconds}};
  o["executors"] = string_array(s.executors);
  if (s.transport == eng::McpServerConfig::Transport::Stdio) {
    o["command"] = s.command;
    o["args"] = string_array(s.args);
  } else {
    o["url"] = s.url;
  }
  if (s.tools) o["tools"] = string_array(*s.tools);
  if (!s.plugin.empty()) o["plugin"] = s.plugin;
  o["used_by_agent"] = used_by_agent(s, view);
  return o;
}

json::object plugin_json(const eng::PluginInfo& p) {
  json::object o{{"name", p.name},
                 {"version", p.version},
                 {"enabled", p.enabled},
                 {"valid", p.valid},
                 {"format", eng::format_name(p.format)},
                 {"path", p.root.string()},
                 {"manifest", p.manifest.string()}};
  o["skills"] = string_array(p.skill_names);
  o["mcp_servers"] = string_array(p.mcp_server_ids);
  if (p.install) o["source"] = p.install->source;
  return o;
}

json::object agent_json(const eng::Engine& e, const std::string& name, const eng::Agent& a) {
  json::object o{{"name", name}, {"description", a.description}, {"default", name == e.default_agent()}};
  if (!a.file.empty()) o["file"] = a.file.string();
  if (a.model) o["model"] = *a.model;
  return o;
}

int print_json(CheckReport& r) {
  const auto& e = *r.engine;
  const auto& view = r.view;
  json::array skills, shadowed, hidden, agents_md, servers, plugins, agents, problems, executors;
  for (const auto& [_, x] : e.executors()) executors.push_back(executor_json(x));
  for (const auto& s : view.skills) skills.push_back(skill_json(*s));
  for (const auto& s : view.shadowed) shadowed.push_back(skill_json(*s));
  for (const auto& s : view.not_for_agent) hidden.push_back(skill_json(*s));
  for (std::size_t i = 0; i < view.agents_md.size(); ++i)
    agents_md.push_back(json::object{{"path", view.agents_md[i].path.string()}, {"precedence", i}});
  for (const auto& s : e.mcp_servers()) servers.push_back(mcp_server_json(s, view));
  for (const auto& p : e.plugins()) plugins.push_back(plugin_json(p));
  for (const auto& [name, a] : e.agents()) agents.push_back(agent_json(e, name, a));
  for (const auto& d : r.all) problems.push_back(diag_json(d));
  std::size_t hook_count = e.hooks().hooks.size();
  json::object out{{"config_root", r.root.string()},
                   {"cwd", r.cwd.string()},
                   {"git_root", string_or_null(view.git_root.string())},
                   {"agent", view.agent.name},
                   {"model", string_or_null(r.model)},
                   {"model_source", r.model_from},
                   {"api_key_source", string_or_null(r.key.source)},
                   {"model_problem", string_or_null(r.key.problem)},
                   {"skills", std::move(skills)},
                   {"shadowed_skills", std::move(shadowed)},
                   {"skills_not_for_agent", std::move(hidden)},
                   {"agents_md", std::move(agents_md)},
                   {"mcp_servers", std::move(servers)},
                   {"hooks", json::object{{"count", hook_count}}},
                   {"plugins", std::move(plugins)},
                   {"agents", std::move(agents)},
                   {"executors", std::move(executors)},
                   {"default_executor", e.default_executor(view.agent)},
                   {"sandbox", sandbox_summary(e.main_config().sandbox)},
                   {"problems", std::move(problems)},
                   {"ok", !r.errors},
                   {"load_failed", e.failed()}};
  if (r.probe_id) out["executor_check"] = std::move(r.probe);
  std::string s = json::serialize(out);
  std::fputs((s + "\n").c_str(), stdout);
  return r.errors ? 1 : 0;
}

// ---- the text report, a section each ----

std::string text_session(const CheckReport& r) {
  const auto& view = r.view;
  std::string o;
  o += "Config root: " + r.root.string() + "\n";
  o += "Session directory: " + r.cwd.string() +
       (view.git_root.empty() ? " (not in a git repository)\n" : " (git root " + view.git_root.string() + ")\n");
  o += "Agent: " + view.agent.name + (view.agent.file.empty() ? " (built-in)" : " (" + view.agent.file.string() + ")") +
       "\n";
  o += "Model: " + (r.model.empty() ? std::string("not set (set `model` in config.yaml, or OPENVAALA_MODEL with "
                                                  "OPENAI_API_KEY / ANTHROPIC_API_KEY)")
                                    : r.model + " (from " + r.model_from + ")") +
       "\n";
  if (!r.model.empty()) {
    if (!r.key.problem.empty()) o += "  Cannot be used: " + r.key.problem + "\n";
    else o += "  API key: " + (r.key.source.empty() ? std::string("none (the provider does not need one)") : "from " + r.key.source) + "\n";
  }
  return o;
}

std::string text_skills_and_agents_md(const eng::SessionView& view) {
  std::string o;
  o += "\nSkills (" + std::to_string(view.skills.size()) + "):\n";
  for (const auto& s : view.skills)
    o += "  /" + s->name + "  [" + std::string(eng::source_label(s->source)) + "]  " + s->file.string() + "\n";
  for (const auto& s : view.shadowed)
    o += "  (shadowed) " + s->name + "  [" + std::string(eng::source_label(s->source)) + "]  " + s->file.string() + "\n";
  for (const auto& s : view.not_for_agent)
    o += "  (not for agent " + view.agent.name + ") " + s->name + "  [" + std::string(eng::source_label(s->source)) +
         "]\n";

  o += "\nAGENTS.md (" + std::to_string(view.agents_md.size()) + ", deeper files take precedence):\n";
  for (const auto& f : view.agents_md) o += "  " + f.path.string() + "\n";
  return o;
}

std::string text_servers_and_hooks(const eng::Engine& e, const eng::SessionView& view) {
  std::string o;
  o += "\nMCP servers (" + std::to_string(e.mcp_servers().size()) + "):\n";
  for (const auto& s : e.mcp_servers()) {
    o += "  " + s.id + "  " + server_summary(s) + "  [" + s.source_file.string() + "]";
    if (s.disabled) o += "  disabled";
    else if (!used_by_agent(s, view)) o += "  not used by agent " + view.agent.name;
    if (s.required) o += "  required";
    o += "\n";
  }

  o += "\nHooks: " + std::to_string(e.hooks().hooks.size()) + " (" +
       std::to_string(e.plugin_hook_sources().size()) + " plugin hook section(s))\n";
  return o;
}

std::string text_plugins_and_agents(const eng::Engine& e) {
  std::string o;
  o += "\nPlugins (" + std::to_string(e.plugins().size()) + "):\n";
  for (const auto& p : e.plugins()) {
    o += "  " + p.name + "  " + (p.version.empty() ? "-" : p.version) + "  " + (p.enabled ? "enabled" : "disabled") +
         "  " + std::string(eng::format_name(p.format)) + "  " + p.root.string();
    if (p.enabled && !p.valid) o += "  [broken manifest]";
    o += "\n";
  }

  o += "\nAgents (" + std::to_string(e.agents().size()) + "):\n";
  for (const auto& [name, a] : e.agents()) {
    o += "  " + name + (name == e.default_agent() ? " (default)" : "");
    if (!a.description.empty()) o += "  " + a.description;
    o += "\n";
  }
  return o;
}

std::string text_executors_and_sandbox(const CheckReport& r) {
  const auto& e = *r.engine;
  std::string o;
  o += "\nExecutors (" + std::to_string(e.executors().size() + 2) + ", default " +
       e.default_executor(r.view.agent) + "):\n  local  the session's folder\n  openvaala  built-in skills (read-only)\n";
  for (const auto& [id, x] : e.executors()) o += "  " + id + "  " + executor_summary(x) + "  [" + x.file.string() + "]\n";
  if (r.probe_id) o += "\n" + r.probe_text;
  o += "\nSandbox: " + sandbox_summary(e.main_config().sandbox) + "\n";
  return o;
}

std::string text_problems(const CheckReport& r) {
  std::string o;
  std::size_t nerr = 0, nwarn = 0;
  for (const auto& d : r.all) (d.severity == Diagnostic::Severity::Error ? nerr : nwarn)++;
  o += "\nProblems: " + std::to_string(nerr) + " error(s), " + std::to_string(nwarn) + " warning(s)\n";
  for (const auto& d : r.all) o += d.to_string() + "\n";
  if (r.engine->failed())
    o += "The configuration does not load: no session would start, and a reload keeps the previous "
         "configuration.\n";
  return o;
}

int print_text(const CheckReport& r) {
  std::string o = text_session(r) + text_skills_and_agents_md(r.view) + text_servers_and_hooks(*r.engine, r.view) +
                  text_plugins_and_agents(*r.engine) + text_executors_and_sandbox(r) + text_problems(r);
  std::fputs(o.c_str(), stdout);
  return r.errors ? 1 : 0;
}

}  // namespace

int run_config_check(const std::vector<std::string>& args) {
  const CheckOptions opt = parse_check_args(args);
  if (opt.exit_code) return *opt.exit_code;
  CheckReport report = run_checks(opt);
  return opt.as_json ? print_json(report) : print_text(report);
}

}  // namespace app
