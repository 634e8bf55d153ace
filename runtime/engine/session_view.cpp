// A session's view of the engine snapshot: the skills, AGENTS.md files and instructions one
// working directory and agent see, and their prompt blocks (slash commands: slash_commands.cpp).
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

// A session on this machine: the project's skills (read now), then the user-level ones.
std::vector<SkillPtr> skills_here(const fs::path& cwd, const std::vector<SkillPtr>& user_skills, Diagnostics& diags) {
  std::vector<Skill> project;
  detail::find_skills(cwd / ".agents" / "skills", SkillSource::ProjectAgents, "", Severity::Warning, project, diags);
  detail::find_skills(cwd / ".claude" / "skills", SkillSource::ProjectClaude, "", Severity::Warning, project, diags);
  std::vector<SkillPtr> found;
  found.reserve(project.size() + user_skills.size());
  for (auto& sk : project) found.push_back(std::make_shared<const Skill>(std::move(sk)));
  found.insert(found.end(), user_skills.begin(), user_skills.end());
  return found;
}

// A session on another executor: the skills in its working directory and home (DESIGN §10) in
// the places' order; the private skills, the built-in ones and the plugins' stay where they are.
std::vector<SkillPtr> skills_on(const ExecutorSnapshot& on, const std::vector<SkillPtr>& user_skills,
                                const fs::path& builtin_dir, Diagnostics& diags) {
  std::vector<SkillPtr> found;
  auto there = [&](const fs::path& root, SkillSource source) {
    if (on.workdir.empty()) return;
    std::vector<Skill> read;
    detail::find_skills_in(on.skill_files, root, source, Severity::Warning, read, diags);
    for (auto& sk : read) {
      sk.executor = on.executor;
      found.push_back(std::make_shared<const Skill>(std::move(sk)));
    }
  };
  there(on.workdir / ".agents" / "skills", SkillSource::ProjectAgents);
  there(on.workdir / ".claude" / "skills", SkillSource::ProjectClaude);
  for (const auto& s : user_skills) {
    if (s->source == SkillSource::HomeAgents || s->source == SkillSource::HomeClaude) continue;
    if (s->source == SkillSource::Builtin)
      found.push_back(std::make_shared<const Skill>(on_openvaala_executor(*s, builtin_dir)));
    else
      found.push_back(s);
  }
  if (!on.home.empty()) {
    there(on.home / ".agents" / "skills", SkillSource::HomeAgents);
    there(on.home / ".claude" / "skills", SkillSource::HomeClaude);
  }
  return found;
}

// The first skill of a name wins (later ones are shadowed); an agent with a skills list gets only those.
void choose_skills(std::vector<SkillPtr>& found, SessionView& v) {
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
  // An engine without its skills serves only until the whole one is in (no turn, no command
  // list before): the project's skills are read then, not on session/new's answer path.
  std::vector<SkillPtr> found;
  if (skills_loaded() && !on) {
    found = skills_here(v.cwd, user_skills_, v.diagnostics);
  } else if (skills_loaded()) {
    v.executor = on->executor;
    found = skills_on(*on, user_skills_, options_.builtin_skills_dir, v.diagnostics);
  }
  choose_skills(found, v);
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

}  // namespace runtime::engine
