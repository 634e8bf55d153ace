#pragma once
// The engine snapshot a connection's sessions use: loaded off the io thread in three steps at
// startup, reloaded on request or when skill files change (SkillWatcher), and refused with
// path:line problems when broken. The open sessions take each new one through EngineUser.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/engine/engine.hpp"
#include "runtime/engine/skill_watcher.hpp"
#include "runtime/executors/executors.hpp"
#include "support/cancellation.hpp"
#include "support/one_shot_event.hpp"

namespace runtime {

// What a configuration that does not load means, with its first problems: `what_fails` ("no
// session can start", "this session cannot run a prompt"); `read_again`: when the files are read again.
std::string broken_config_message(const engine::Engine& engine, std::string_view what_fails, std::string_view read_again);

// What the open sessions do when the engine changes (SessionManager).
class EngineUser {
 public:
  virtual ~EngineUser() = default;
  // Every open session takes `engine`: its view is built again and its slash commands shown.
  virtual void use_engine(const std::shared_ptr<const engine::Engine>& engine) = 0;
  // The same for an engine that differs only by the skills in `swaps`: each view swaps them (or
  // is built again when a name changed). Returns what shows the sessions their slash commands
  // where they changed (all of them when `commands_same` is false): the host times the two apart.
  virtual std::function<void()> use_skills(const std::shared_ptr<const engine::Engine>& engine,
                                           const std::vector<engine::Engine::SkillSwap>& swaps, bool commands_same) = 0;
};

class EngineHost {
 public:
  struct Deps {
    boost::asio::any_io_executor io;
    boost::asio::thread_pool* pool = nullptr;
    std::filesystem::path config_root;
    std::shared_ptr<executors::Registry> executors;  // configured with each engine
    // Skill places are watched once the whole engine is in (SkillWatcher). Off where an
    // io_context is run until it has no work left (unit tests): a watch is work that never ends.
    bool watch_skill_files = false;
  };
  EngineHost(Deps deps, EngineUser& user) : deps_(std::move(deps)), user_(user) {}

  // Loads the engine on the pool in three steps: the settings (config.yaml, agents, executors:
  // all a session/new answer needs), then without the skills (plugins, MCP servers, hooks: what a
  // session needs after its answer), then whole. Sessions opened in between take the later steps
  // as they come in, and announce their slash commands only with the skills.
  void start_loading();
  // Re-reads the configuration. One that fails to load keeps the old one; open sessions pick
  // up new skills and slash commands.
  void reload_config();
  // Re-reads the configuration now and returns the engine in use after (the new one when it
  // loaded): for a session/new after `openvaala login` wrote config.yaml's model meanwhile.
  boost::asio::awaitable<std::shared_ptr<const engine::Engine>> reload_now();
  // The skill places changed on disk (SkillWatcher): SKILL.md files written in place are read
  // again alone, anything else is a reload_config.
  void skills_changed(engine::SkillWatcher::Change change);
  // Runs on the io executor once the engine is first loaded, and after each reload that took
  // effect, once the open sessions use it.
  void on_reloaded(std::function<void(const engine::Engine&)> f) { on_reloaded_ = std::move(f); }
  // Skill files are no longer watched (on the way out: arming at 20,000 folders takes 0.1 s).
  void stop_watching_skills() {
    if (skill_watcher_) skill_watcher_->stop();
  }

  // The engine as loaded so far (the settings at least).
  boost::asio::awaitable<std::shared_ptr<const engine::Engine>> loaded_engine();
  // Waits until the skills are loaded too (a turn needs them: the system prompt, slash commands).
  // False when `cancel` fired first.
  boost::asio::awaitable<bool> skills_loaded(support::CancelSource* cancel);
  // The engine a session opens with: the settings must load (else AgentError with their problems).
  boost::asio::awaitable<std::shared_ptr<const engine::Engine>> engine_for_session();
  // The startup's engine with its extensions, once in; when it failed, the files are read again
  // (and the sessions take the result if it loads). Null when `cancel` fired first.
  boost::asio::awaitable<std::shared_ptr<const engine::Engine>> complete_engine(support::CancelSource* cancel);
  // The engine in use now (null before the first step is in).
  const std::shared_ptr<const engine::Engine>& engine() const { return engine_; }

 private:
  // The startup's last step: the sessions opened with an earlier one take the whole engine.
  void adopt_whole_engine(std::shared_ptr<const engine::Engine> core, std::shared_ptr<const engine::Engine> whole);
  // The open sessions (and the executors) switch to `engine`; their views and commands follow.
  void use_engine(std::shared_ptr<const engine::Engine> engine);
  // Returns when the sessions had it, before their slash commands were sent.
  std::chrono::steady_clock::time_point use_skills(std::shared_ptr<const engine::Engine> engine,
                                                   const std::vector<engine::Engine::SkillSwap>& swaps);
  // Runs the pending reloads one after another (whole ones first; they read every file).
  void run_reloads();
  boost::asio::awaitable<void> reload_whole();
  // False when the skills could not be read again in place (a whole reload is pending then).
  boost::asio::awaitable<bool> reload_skills(std::vector<std::filesystem::path> dirs);
  // Watches the skill places of engine_ when they are not the ones watched already.
  void watch_skills();

  Deps deps_;
  EngineUser& user_;
  std::shared_ptr<const engine::Engine> engine_;
  std::unique_ptr<support::OneShotEvent> settings_ready_;  // the first step of the startup load is in
  std::unique_ptr<support::OneShotEvent> engine_ready_;    // the second (with the extensions) too
  std::unique_ptr<support::OneShotEvent> skills_ready_;    // the third (the whole engine) too
  bool reloading_ = false;
  bool whole_reload_pending_ = false;
  std::set<std::filesystem::path> changed_skill_dirs_;  // SKILL.md files to read again
  std::unique_ptr<engine::SkillWatcher> skill_watcher_;  // made with the whole engine
  std::vector<const void*> watched_folders_;             // the SkillPlace::folders watched
  std::function<void(const engine::Engine&)> on_reloaded_;
};

}  // namespace runtime
