// A session's view of the engine snapshot: the skills, AGENTS.md files and instructions one
// working directory and agent see, their prompt blocks, and slash-command expansion.
#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_set>

#include "runtime/engine/engine.hpp"
#include "runtime/engine/loaders.hpp"
#include "runtime/engine/paths.hpp"
#include "support/file_io.hpp"
#include "support/text.hpp"

namespace runtime::engine {

namespace fs = std::filesystem;
using Severity = Diagnostic::Severity;

namespace {

// A session on another executor: the built-in skills are read there, on `openvaala`, in /skills.
Skill on_openvaala_executor(Skill s, const fs::path& builtin_dir) {
  if (auto text = support::read_file(s.file)) s.text = std::make_shared<const std::string>(std::move(*text));
  s.file = fs::path("/skills") / s.file.lexically_relative(builtin_dir);
  s.executor = "openvaala";
  return s;
}

}  // namespace

SessionView Engine::session_view(const fs::path& cwd_in, std::string_view agent_name, const ExecutorSnapshot* on) const {
  SessionView v;
  v.cwd = cwd_in.lexically_normal();
  if (!v.cwd.empty() && v.cwd.filename().empty()) v.cwd = v.cwd.parent_path();
  v.git_root = find_git_root(v.cwd);
  const Agent* a = find_agent(agent_name.empty() ? std::string_view(default_agent_) : agent_name);
  if (!a) a = find_agent(default_agent_);
  v.agent = *a;

  std::vector<SkillPtr> found;
  auto add_found = [&](std::vector<Skill> skills) {
    for (auto& sk : skills) found.push_back(std::make_shared<const Skill>(std::move(sk)));
  };
  if (!skills_loaded()) {
    // An engine without its skills serves only until the whole one is in (no turn, no command
    // list before): the project's skills are read then, not on session/new's answer path.
  } else if (!on) {
    std::vector<Skill> project;
    detail::find_skills(v.cwd / ".agents" / "skills", SkillSource::ProjectAgents, "", Severity::Warning, project,
                        v.diagnostics);
    detail::find_skills(v.cwd / ".claude" / "skills", SkillSource::ProjectClaude, "", Severity::Warning, project,
                        v.diagnostics);
    add_found(std::move(project));
    found.insert(found.end(), user_skills_.begin(), user_skills_.end());
  } else {
    // The working directory and home of the default executor (DESIGN §10); the private skills,
    // the built-in ones and the plugins' stay where they are.
    v.executor = on->executor;
    auto there = [&](const fs::path& root, SkillSource source) {
      if (on->workdir.empty()) return;
      std::vector<Skill> read;
      detail::find_skills_in(on->skill_files, root, source, Severity::Warning, read, v.diagnostics);
      for (auto& sk : read) sk.executor = on->executor;
      add_found(std::move(read));
    };
    there(on->workdir / ".agents" / "skills", SkillSource::ProjectAgents);
    there(on->workdir / ".claude" / "skills", SkillSource::ProjectClaude);
    for (const auto& s : user_skills_) {
      if (s->source == SkillSource::HomeAgents || s->source == SkillSource::HomeClaude) continue;
      if (s->source == SkillSource::Builtin)
        found.push_back(std::make_shared<const Skill>(on_openvaala_executor(*s, options_.builtin_skills_dir)));
      else
        found.push_back(s);
    }
    if (!on->home.empty()) {
      there(on->home / ".agents" / "skills", SkillSource::HomeAgents);
      there(on->home / ".claude" / "skills", SkillSource::HomeClaude);
    }
  }
  // Names point into the shared skills, which outlive this function: no string is copied.
  std::unordered_set<std::string_view> taken;
  taken.reserve(found.size());
  std::unordered_set<std::string_view> for_agent;
  if (v.agent.skills) for_agent.insert(v.agent.skills->begin(), v.agent.skills->end());
  v.skills.reserve(found.size());
  for (auto& s : found) {
    if (!taken.insert(s->name).second) {
      v.shadowed.push_back(std::move(s));
      continue;
    }
    if (v.agent.skills && !for_agent.count(s->name)) {
      v.not_for_agent.push_back(std::move(s));
      continue;
    }
    v.skills.push_back(std::move(s));
  }
  v.agents_md = on ? on->agents_md : load_agents_md_chain(v.cwd);
  v.mcp_servers = mcp_servers_for(v.agent);
  return v;
}

// ---------------------------------------------------------------------------------------------

const Skill* SessionView::find_skill(std::string_view name) const {
  for (const auto& s : skills)
    if (s->name == name) return s.get();
  return nullptr;
}

std::vector<AvailableCommand> SessionView::available_commands() const {
  std::vector<AvailableCommand> out;
  for (const auto& s : skills)
    out.push_back({s->name, s->description, s->argument_hint.empty() ? "what you want done with this skill (optional)" : s->argument_hint});
  return out;
}

std::string SessionView::skills_prompt() const {
  if (skills.empty()) return {};
  std::string s =
      "# Skills\n"
      "Skills are folders of instructions for particular tasks. Each line gives a skill's name, when to use it, and "
      "its SKILL.md file. When a task matches a skill's description, read that SKILL.md in full with read_file "
      "before you start, and follow it; paths it mentions are relative to the skill's folder. When the user's "
      "message already contains a skill, do not read it again.\n\n";
  for (const auto& sk : skills) {
    // A skill elsewhere than the default executor is read there (read_file's `executor`).
    const std::string where = sk->executor == executor ? "" : ", executor: " + sk->executor;
    s += "- " + sk->name + ": " + sk->description + " (file: " + sk->file.string() + where + ")\n";
  }
  return s;
}

std::string SessionView::instructions_prompt() const {
  if (support::trim(agent.instructions).empty()) return {};
  std::string s = "# Instructions\n" + agent.instructions;
  if (s.back() != '\n') s += '\n';
  return s;
}

std::string SessionView::agents_md_prompt() const { return engine::agents_md_prompt(agents_md); }

std::string SessionView::system_prompt_block() const {
  std::string out;
  for (const auto& part : {instructions_prompt(), skills_prompt(), agents_md_prompt()}) {
    if (part.empty()) continue;
    if (!out.empty()) out += '\n';
    out += part;
  }
  return out;
}

SlashExpansion expand_slash_command(const SessionView& view, std::string_view text) {
  SlashExpansion r;
  r.text = std::string(text);
  std::size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
  if (i >= text.size() || text[i] != '/') return r;
  std::size_t end = text.find_first_of(" \t\r\n", i);
  std::string token(text.substr(i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1));
  std::string rest = end == std::string_view::npos ? std::string() : support::trim(text.substr(end));
  bool explicit_skill = token.rfind("skill:", 0) == 0;
  std::string name = explicit_skill ? token.substr(6) : token;
  if (name.empty()) return r;
  const Skill* s = view.find_skill(name);
  if (!s) {
    if (!explicit_skill) return r;
    r.kind = SlashExpansion::Kind::Refused;
    bool exists = std::any_of(view.not_for_agent.begin(), view.not_for_agent.end(),
                              [&](const SkillPtr& x) { return x->name == name; });
    if (exists) {
      r.error = "The skill '" + name + "' is not available to the agent '" + view.agent.name +
                "' (it is not in the agent's skills list).";
    } else {
      r.error = "There is no skill named '" + name + "' available to the agent '" + view.agent.name + "'.";
    }
    if (!view.skills.empty()) {
      r.error += " Available skills:";
      for (const auto& x : view.skills) r.error += " " + x->name;
      r.error += ".";
    }
    return r;
  }
  auto content = s->text ? std::optional<std::string>(*s->text) : support::read_file(s->file);
  if (!content || content->size() > kMaxSkillFileBytes) {
    r.kind = SlashExpansion::Kind::Refused;
    r.error = "The skill '" + name + "' cannot be read from " + s->file.string() + ".";
    return r;
  }
  r.kind = SlashExpansion::Kind::Expanded;
  r.skill = s->name;
  std::string out = "The user invoked the skill \"" + s->name + "\" (" + s->file.string() +
                    "). Follow its instructions for this request.\n\n<skill name=\"" + s->name + "\" path=\"" +
                    s->file.string() + "\">\n" + *content;
  if (out.back() != '\n') out += '\n';
  out += "</skill>\n\n";
  if (rest.empty()) out += "The user gave no further request: apply the skill to the current context.";
  else out += "User request: " + rest;
  r.text = std::move(out);
  return r;
}

}  // namespace runtime::engine
