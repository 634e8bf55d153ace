// A changed SKILL.md without a whole load: the engine is copied with that skill read again and
// everything else shared, and the sessions' views swap the one skill.
#include <algorithm>

#include "runtime/engine/engine.hpp"
#include "runtime/engine/loaders.hpp"

namespace runtime::engine {

namespace {

// Private skills' problems are errors (the user's own), the home places' warnings: as Engine::load.
Diagnostic::Severity severity_of(SkillSource source) {
  return source == SkillSource::Private ? Diagnostic::Severity::Error : Diagnostic::Severity::Warning;
}

// The problems of `file` are now `fresh`: the old ones go, the new ones take their place.
void replace_diagnostics(Diagnostics& diags, const std::string& file, Diagnostics fresh) {
  auto first = std::find_if(diags.begin(), diags.end(), [&](const Diagnostic& d) { return d.path == file; });
  auto at = first - diags.begin();
  diags.erase(std::remove_if(first, diags.end(), [&](const Diagnostic& d) { return d.path == file; }), diags.end());
  diags.insert(diags.begin() + std::min<std::ptrdiff_t>(at, static_cast<std::ptrdiff_t>(diags.size())),
               std::make_move_iterator(fresh.begin()), std::make_move_iterator(fresh.end()));
}

}  // namespace

void Engine::compose_user_skills() {
  user_skills_.clear();
  auto add_place = [&](SkillSource source) {
    for (const auto& place : skill_places_)
      if (place.source == source)
        for (const auto& s : place.skills)
          if (s) user_skills_.push_back(s);
  };
  add_place(SkillSource::Private);
  user_skills_.insert(user_skills_.end(), fixed_skills_.begin(), fixed_skills_.end());
  add_place(SkillSource::HomeAgents);
  add_place(SkillSource::HomeClaude);
}

std::shared_ptr<const Engine> Engine::with_skills_read_again(const std::vector<fs::path>& dirs,
                                                             std::vector<SkillSwap>& swaps, Diagnostics& diags) const {
  if (!skills_loaded()) return nullptr;
  std::shared_ptr<Engine> e(new Engine(*this));
  for (const auto& dir : dirs) {
    bool found = false;
    for (auto& place : e->skill_places_) {
      const auto& folders = *place.folders;
      // As strings: both come from the same search, and path's == compares part by part (10x slower).
      auto it = std::find_if(folders.begin(), folders.end(), [&](const SkillFolder& f) { return f.dir.native() == dir.native(); });
      if (it == folders.end()) continue;
      // A searched folder that now holds SKILL.md ends the search there: the skills below it go.
      if (!it->holds_skill_file) return nullptr;
      std::optional<Skill> skill;
      Diagnostics fresh;
      // No SKILL.md any more: the search goes on below this folder.
      if (!detail::read_skill_folder(dir, place.source, "", severity_of(place.source), skill, fresh)) return nullptr;
      auto& slot = place.skills[static_cast<std::size_t>(it - folders.begin())];
      SkillPtr after = skill ? std::make_shared<const Skill>(std::move(*skill)) : nullptr;
      swaps.push_back({slot, after});
      slot = std::move(after);
      diags.insert(diags.end(), fresh.begin(), fresh.end());
      replace_diagnostics(e->diags_, (dir / "SKILL.md").string(), std::move(fresh));
      found = true;
      break;
    }
    if (!found) return nullptr;
  }
  e->compose_user_skills();
  return e;
}

bool SessionView::swap_skill(const SkillPtr& before, const SkillPtr& after) {
  if (!before || !after || before->name != after->name) return false;
  for (auto* list : {&skills, &shadowed, &not_for_agent})
    std::replace(list->begin(), list->end(), before, after);
  return true;
}

}  // namespace runtime::engine
