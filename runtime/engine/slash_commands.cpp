// Slash commands (DESIGN §7): `/name rest` and `/skill:name rest` become the skill's SKILL.md plus
// the user's request; `/skill:name` for a skill the agent cannot use is refused.
#include <algorithm>
#include <optional>
#include <string_view>

#include "runtime/engine/engine.hpp"
#include "support/file_io.hpp"
#include "support/text.hpp"

namespace runtime::engine {

namespace {

// `/token rest` split: the skill's name (without `skill:`), what follows it.
struct SlashCommand {
  std::string name;
  std::string rest;
  bool explicit_skill = false;  // written `/skill:name`
};

// nullopt when the text (after leading whitespace) does not start with `/` and a name.
std::optional<SlashCommand> parse_slash_command(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
  if (i >= text.size() || text[i] != '/') return std::nullopt;
  std::size_t end = text.find_first_of(" \t\r\n", i);
  std::string token(text.substr(i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1));
  SlashCommand c;
  c.rest = end == std::string_view::npos ? std::string() : support::trim(text.substr(end));
  c.explicit_skill = token.rfind("skill:", 0) == 0;
  c.name = c.explicit_skill ? token.substr(6) : token;
  if (c.name.empty()) return std::nullopt;
  return c;
}

// Why `/skill:name` cannot be used here, with the skills that can.
std::string unknown_skill_error(const SessionView& view, const std::string& name) {
  bool exists = std::any_of(view.not_for_agent.begin(), view.not_for_agent.end(),
                            [&](const SkillPtr& x) { return x->name == name; });
  std::string error = exists ? "The skill '" + name + "' is not available to the agent '" + view.agent.name +
                                   "' (it is not in the agent's skills list)."
                             : "There is no skill named '" + name + "' available to the agent '" + view.agent.name + "'.";
  if (!view.skills.empty()) {
    error += " Available skills:";
    for (const auto& x : view.skills) error += " " + x->name;
    error += ".";
  }
  return error;
}

// The message the model gets: the skill's SKILL.md in a <skill> element, then the request.
std::string skill_message(const Skill& s, const std::string& content, const std::string& rest) {
  std::string out = "The user invoked the skill \"" + s.name + "\" (" + s.file.string() +
                    "). Follow its instructions for this request.\n\n<skill name=\"" + s.name + "\" path=\"" +
                    s.file.string() + "\">\n" + content;
  if (out.back() != '\n') out += '\n';
  out += "</skill>\n\n";
  if (rest.empty()) out += "The user gave no further request: apply the skill to the current context.";
  else out += "User request: " + rest;
  return out;
}

}  // namespace

SlashExpansion expand_slash_command(const SessionView& view, std::string_view text) {
  SlashExpansion r;
  r.text = std::string(text);
  const auto cmd = parse_slash_command(text);
  if (!cmd) return r;
  const Skill* s = view.find_skill(cmd->name);
  if (!s) {
    if (!cmd->explicit_skill) return r;
    r.kind = SlashExpansion::Kind::Refused;
    r.error = unknown_skill_error(view, cmd->name);
    return r;
  }
  auto content = s->text ? std::optional<std::string>(*s->text) : support::read_file(s->file);
  if (!content || content->size() > kMaxSkillFileBytes) {
    r.kind = SlashExpansion::Kind::Refused;
    r.error = "The skill '" + cmd->name + "' cannot be read from " + s->file.string() + ".";
    return r;
  }
  r.kind = SlashExpansion::Kind::Expanded;
  r.skill = s->name;
  r.text = skill_message(*s, *content, cmd->rest);
  return r;
}

}  // namespace runtime::engine
