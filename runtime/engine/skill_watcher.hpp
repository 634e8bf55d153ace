#pragma once
// Watches the skill places of the engine in use (inotify), so that skills change in a running
// server as their files do, without `openvaala serve reload`:
// - a SKILL.md written, replaced or removed in a skill folder: that folder is reported, to be read
//   again alone (Engine::with_skills_read_again: milliseconds at 20,000 skills);
// - anything that changes what the search finds (a folder added, removed or renamed where skills
//   are searched, a place created, the watched folder itself gone, events lost): a whole reload.
// The watches are added on the pool (about 5 µs each: 0.1 s at 20,000 folders), so arming never
// delays the io thread; changes are reported on the io executor. A change made between the load
// and its folder's watch is caught up at once: each folder is compared, once watched, with what
// the load saw (the SKILL.md's mtime, the folders below a searched one).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/thread_pool.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/engine/engine.hpp"

namespace runtime::engine {

class SkillWatcher {
 public:
  struct Change {
    bool whole = false;                               // a whole reload is needed
    std::vector<std::filesystem::path> skill_dirs;  // else: these folders' SKILL.md changed
  };
  SkillWatcher(boost::asio::any_io_executor executor, boost::asio::thread_pool& pool, std::function<void(Change)> on_change);
  ~SkillWatcher();
  SkillWatcher(const SkillWatcher&) = delete;
  SkillWatcher& operator=(const SkillWatcher&) = delete;

  // Watches these places instead of the earlier ones. When a watch cannot be added because a
  // folder is gone since the load, a whole reload is asked for; when the system's limit
  // (fs.inotify.max_user_watches) is reached, nothing is watched (logged once).
  void watch(const std::vector<engine::SkillPlace>& places);
  // No more reports; a watch() still adding watches stops adding them.
  void stop();

  struct State;  // shared with the pool's job and the pending read

 private:
  std::shared_ptr<State> state_;
};

}  // namespace runtime::engine
