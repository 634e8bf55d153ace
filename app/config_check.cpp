// `openvaala config check [--cwd DIR] [--json]`.
#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>
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
  return "on " + when + " (Landlock ABI " + std::to_string(abi) + "); commands on ssh executors are not sandboxed";
}

std::string executor_summary(const runtime::config::ExecutorConfig& x) {
  using T = runtime::config::ExecutorConfig::Type;
  if (x.type == T::Virtual) return "virtual  " + x.root.string() + (x.read_only ? "  read-only" : "");
  std::string s = "ssh  " + (x.user ? *x.user + "@" : "") + x.host + (x.port ? ":" + std::to_string(*x.port) : "");
  return s + "  workdir " + (x.workdir.empty() ? std::string("~") : x.workdir);
}

json::object executor_json(const runtime::config::ExecutorConfig& x) {
  json::object o{{"id", x.id}, {"type", runtime::config::executor_type_name(x.type)}, {"file", x.file.string()}};
  if (x.type == runtime::config::ExecutorConfig::Type::Ssh) {
    o["host"] = x.host;
    if (x.user) o["user"] = *x.user;
    if (x.port) o["port"] = *x.port;
    o["workdir"] = x.workdir;
  } else {
    o["root"] = x.root.string();
    o["read_only"] = x.read_only;
  }
  return o;
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
  std::string tmpl = (fs::temp_directory_path() / "openvaala-check-XXXXXX").string();
  fs::path dir = ::mkdtemp(tmpl.data()) ? fs::path(tmpl) : fs::temp_directory_path();
  auto p = runtime::executors::probe_ssh(x, dir);
  std::error_code ec;
  fs::remove_all(dir, ec);
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

}  // namespace

int run_config_check(const std::vector<std::string>& args) {
  fs::path cwd = fs::current_path();
  bool as_json = false;
  std::optional<std::string> probe_id;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") as_json = true;
    else if (args[i] == "--executor") {
      if (i + 1 >= args.size()) return usage("--executor needs an executor id");
      probe_id = args[++i];
    } else if (args[i].rfind("--executor=", 0) == 0) probe_id = args[i].substr(11);
    else if (args[i] == "--cwd") {
      if (i + 1 >= args.size()) return usage("--cwd needs a directory");
      cwd = args[++i];
    } else if (args[i].rfind("--cwd=", 0) == 0) cwd = args[i].substr(6);
    else if (args[i] == "-h" || args[i] == "--help") {
      std::fputs(
          "Usage: openvaala config check [--cwd DIR] [--json] [--executor ID]\n\n"
          "Loads every config source as a session in DIR (default: the current directory) would, prints what it\n"
          "found and every problem as path:line: message. Exit status 1 when there is an error.\n"
          "--executor ID also connects to that executor and reports what it found there (exit 1 when it cannot).\n",
          stdout);
      return 0;
    } else return usage("unknown option for 'config check': " + args[i]);
  }
  std::error_code ec;
  cwd = fs::absolute(cwd, ec).lexically_normal();
  if (!fs::is_directory(cwd, ec)) return usage("--cwd: not a directory: " + cwd.string());

  const fs::path root = runtime::config::config_root();
  Diagnostics diags;
  auto engine = eng::Engine::load(root, diags);
  auto view = engine->session_view(cwd);
  Diagnostics all = engine->diagnostics();
  all.insert(all.end(), view.diagnostics.begin(), view.diagnostics.end());
  runtime::config::load_credentials(root, all);  // only its problems: keys are never shown
  bool errors = runtime::config::has_errors(all);
  std::string probe_text;
  json::object probe;
  if (probe_id) {
    bool probe_ok = false;
    probe = probe_json(*engine, *probe_id, probe_text, probe_ok);
    errors = errors || !probe_ok;
  }
  std::string model_from;
  std::string model = model_line(*engine, view.agent, model_from);
  const KeyStatus key = key_status(*engine, view.agent);
  if (auto d = model_diagnostic(*engine, model_from, key)) all.push_back(std::move(*d));

  if (as_json) {
    json::array skills, shadowed, hidden, agents_md, servers, plugins, agents, problems, executors;
    for (const auto& [_, x] : engine->executors()) executors.push_back(executor_json(x));
    for (const auto& s : view.skills) skills.push_back(skill_json(*s));
    for (const auto& s : view.shadowed) shadowed.push_back(skill_json(*s));
    for (const auto& s : view.not_for_agent) hidden.push_back(skill_json(*s));
    for (std::size_t i = 0; i < view.agents_md.size(); ++i)
      agents_md.push_back(json::object{{"path", view.agents_md[i].path.string()}, {"precedence", i}});
    for (const auto& s : engine->mcp_servers()) {
      json::object o{{"id", s.id},
                     {"type", eng::transport_name(s.transport)},
                     {"source", s.source_file.string()},
                     {"line", s.source_line},
                     {"disabled", s.disabled},
                     {"required", s.required},
                     {"startup_timeout_seconds", s.startup_timeout_seconds},
                     {"tool_timeout_seconds", s.tool_timeout_seconds}};
      json::array ex;
      for (const auto& x : s.executors) ex.push_back(json::value(x));
      o["executors"] = std::move(ex);
      if (s.transport == eng::McpServerConfig::Transport::Stdio) {
        o["command"] = s.command;
        json::array a;
        for (const auto& x : s.args) a.push_back(json::value(x));
        o["args"] = std::move(a);
      } else {
        o["url"] = s.url;
      }
      if (s.tools) {
        json::array t;
        for (const auto& x : *s.tools) t.push_back(json::value(x));
        o["tools"] = std::move(t);
      }
      if (!s.plugin.empty()) o["plugin"] = s.plugin;
      bool used = false;
      for (const auto& v : view.mcp_servers) used = used || v.id == s.id;
      o["used_by_agent"] = used;
      servers.push_back(std::move(o));
    }
    for (const auto& p : engine->plugins()) {
      json::object o{{"name", p.name},
                     {"version", p.version},
                     {"enabled", p.enabled},
                     {"valid", p.valid},
                     {"format", eng::format_name(p.format)},
                     {"path", p.root.string()},
                     {"manifest", p.manifest.string()}};
      json::array sk, ms;
      for (const auto& x : p.skill_names) sk.push_back(json::value(x));
      for (const auto& x : p.mcp_server_ids) ms.push_back(json::value(x));
      o["skills"] = std::move(sk);
      o["mcp_servers"] = std::move(ms);
      if (p.install) o["source"] = p.install->source;
      plugins.push_back(std::move(o));
    }
    for (const auto& [name, a] : engine->agents()) {
      json::object o{{"name", name}, {"description", a.description}, {"default", name == engine->default_agent()}};
      if (!a.file.empty()) o["file"] = a.file.string();
      if (a.model) o["model"] = *a.model;
      agents.push_back(std::move(o));
    }
    for (const auto& d : all) problems.push_back(diag_json(d));
    std::size_t hook_count = engine->hooks().hooks.size();
    json::object out{{"config_root", root.string()},
                     {"cwd", cwd.string()},
                     {"git_root", view.git_root.empty() ? json::value(nullptr) : json::value(view.git_root.string())},
                     {"agent", view.agent.name},
                     {"model", model.empty() ? json::value(nullptr) : json::value(model)},
                     {"model_source", model_from},
                     {"api_key_source", key.source.empty() ? json::value(nullptr) : json::value(key.source)},
                     {"model_problem", key.problem.empty() ? json::value(nullptr) : json::value(key.problem)},
                     {"skills", std::move(skills)},
                     {"shadowed_skills", std::move(shadowed)},
                     {"skills_not_for_agent", std::move(hidden)},
                     {"agents_md", std::move(agents_md)},
                     {"mcp_servers", std::move(servers)},
                     {"hooks", json::object{{"count", hook_count}}},
                     {"plugins", std::move(plugins)},
                     {"agents", std::move(agents)},
                     {"executors", std::move(executors)},
                     {"default_executor", engine->default_executor(view.agent)},
                     {"sandbox", sandbox_summary(engine->main_config().sandbox)},
                     {"problems", std::move(problems)},
                     {"ok", !errors},
                     {"load_failed", engine->failed()}};
    if (probe_id) out["executor_check"] = std::move(probe);
    std::string s = json::serialize(out);
    std::fputs((s + "\n").c_str(), stdout);
    return errors ? 1 : 0;
  }

  std::string o;
  o += "Config root: " + root.string() + "\n";
  o += "Session directory: " + cwd.string() +
       (view.git_root.empty() ? " (not in a git repository)\n" : " (git root " + view.git_root.string() + ")\n");
  o += "Agent: " + view.agent.name + (view.agent.file.empty() ? " (built-in)" : " (" + view.agent.file.string() + ")") +
       "\n";
  o += "Model: " + (model.empty() ? std::string("not set (set `model` in config.yaml, or OPENVAALA_MODEL with "
                                                "OPENAI_API_KEY / ANTHROPIC_API_KEY)")
                                  : model + " (from " + model_from + ")") +
       "\n";
  if (!model.empty()) {
    if (!key.problem.empty()) o += "  Cannot be used: " + key.problem + "\n";
    else o += "  API key: " + (key.source.empty() ? std::string("none (the provider does not need one)") : "from " + key.source) + "\n";
  }

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

  o += "\nMCP servers (" + std::to_string(engine->mcp_servers().size()) + "):\n";
  for (const auto& s : engine->mcp_servers()) {
    bool used = false;
    for (const auto& v : view.mcp_servers) used = used || v.id == s.id;
    o += "  " + s.id + "  " + server_summary(s) + "  [" + s.source_file.string() + "]";
    if (s.disabled) o += "  disabled";
    else if (!used) o += "  not used by agent " + view.agent.name;
    if (s.required) o += "  required";
    o += "\n";
  }

  o += "\nHooks: " + std::to_string(engine->hooks().hooks.size()) + " (" +
       std::to_string(engine->plugin_hook_sources().size()) + " plugin hook section(s))\n";

  o += "\nPlugins (" + std::to_string(engine->plugins().size()) + "):\n";
  for (const auto& p : engine->plugins()) {
    o += "  " + p.name + "  " + (p.version.empty() ? "-" : p.version) + "  " + (p.enabled ? "enabled" : "disabled") +
         "  " + std::string(eng::format_name(p.format)) + "  " + p.root.string();
    if (p.enabled && !p.valid) o += "  [broken manifest]";
    o += "\n";
  }

  o += "\nAgents (" + std::to_string(engine->agents().size()) + "):\n";
  for (const auto& [name, a] : engine->agents()) {
    o += "  " + name + (name == engine->default_agent() ? " (default)" : "");
    if (!a.description.empty()) o += "  " + a.description;
    o += "\n";
  }

  o += "\nExecutors (" + std::to_string(engine->executors().size() + 2) + ", default " +
       engine->default_executor(view.agent) + "):\n  local  the session's folder\n  openvaala  built-in skills (read-only)\n";
  for (const auto& [id, x] : engine->executors()) o += "  " + id + "  " + executor_summary(x) + "  [" + x.file.string() + "]\n";
  if (probe_id) o += "\n" + probe_text;
  o += "\nSandbox: " + sandbox_summary(engine->main_config().sandbox) + "\n";

  std::size_t nerr = 0, nwarn = 0;
  for (const auto& d : all) (d.severity == Diagnostic::Severity::Error ? nerr : nwarn)++;
  o += "\nProblems: " + std::to_string(nerr) + " error(s), " + std::to_string(nwarn) + " warning(s)\n";
  for (const auto& d : all) o += d.to_string() + "\n";
  if (engine->failed())
    o += "The configuration does not load: no session would start, and a reload keeps the previous "
         "configuration.\n";
  std::fputs(o.c_str(), stdout);
  return errors ? 1 : 0;
}

}  // namespace app
