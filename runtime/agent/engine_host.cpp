#include "runtime/agent/engine_host.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <utility>

#include "runtime/agent/agent_error.hpp"
#include "support/run_blocking.hpp"

namespace runtime {

namespace {

// Loads the engine (blocking file I/O: on the pool), logging every problem.
std::shared_ptr<const engine::Engine> load_engine_logged(const engine::Engine::Options& options) {
  config::Diagnostics diags;
  auto engine = engine::Engine::load(options, diags);
  for (const auto& d : diags) spdlog::warn("config: {}", d.to_string());
  return engine;
}

std::shared_ptr<const engine::Engine> load_engine_logged(const std::filesystem::path& config_root) {
  return load_engine_logged(engine::Engine::default_options(config_root));
}

}  // namespace

std::string broken_config_message(const engine::Engine& engine, std::string_view what_fails, std::string_view read_again) {
  constexpr std::size_t kShown = 10;
  std::string msg = "OpenVaala's configuration does not load, so " + std::string(what_fails) + ":";
  std::size_t errors = 0;
  for (const auto& d : engine.diagnostics()) {
    if (d.severity != config::Diagnostic::Severity::Error) continue;
    if (++errors <= kShown) msg += "\n" + d.to_string();
  }
  if (errors > kShown) msg += "\n(and " + std::to_string(errors - kShown) + " more)";
  return msg + "\nFix it (`openvaala config check` lists every problem); " + std::string(read_again) + " reads the files again.";
}

void EngineHost::start_loading() {
  settings_ready_ = std::make_unique<support::OneShotEvent>(deps_.io);
  engine_ready_ = std::make_unique<support::OneShotEvent>(deps_.io);
  skills_ready_ = std::make_unique<support::OneShotEvent>(deps_.io);
  boost::asio::co_spawn(
      deps_.io,
      [this]() -> boost::asio::awaitable<void> {
        // In three steps, each on the pool. The settings (a few small files): all a session/new
        // answer needs. Then without the skills (plugins, hooks, MCP servers: what a session needs
        // after its answer), then whole (thousands of SKILL.md files are most of a load). Problems
        // of the first two are logged by the whole load, which reads the same files.
        auto partial_load = [root = deps_.config_root](bool extensions) {
          auto options = engine::Engine::default_options(root);
          options.skills = false;
          options.extensions = extensions;
          engine::Diagnostics ignored;
          return engine::Engine::load(options, ignored);
        };
        auto settings = co_await support::run_blocking(*deps_.pool, [&] { return partial_load(false); });
        engine_ = settings;
        deps_.executors->configure(engine_->executors());
        settings_ready_->set();
        // As after a reload: the model lists are fetched now, so that the first session/new
        // (a client such as acpx reads the model picker only from its answer) already has them.
        if (on_reloaded_) on_reloaded_(*engine_);
        auto core = co_await support::run_blocking(*deps_.pool, [&] { return partial_load(true); });
        if (engine_ == settings) engine_ = core;  // else a retry (engine_for_session) put a whole engine in
        engine_ready_->set();
        auto whole_job = [root = deps_.config_root] { return load_engine_logged(root); };
        adopt_whole_engine(core, co_await support::run_blocking(*deps_.pool, std::move(whole_job)));
        skills_ready_->set();
      },
      boost::asio::detached);
}

void EngineHost::adopt_whole_engine(std::shared_ptr<const engine::Engine> core, std::shared_ptr<const engine::Engine> whole) {
  if (engine_ != core) return;  // a reload or a retry (engine_for_session) put a whole engine in first
  if (whole->failed() && !core->failed()) {  // the files changed in between: as a reload that fails
    spdlog::error("the configuration did not load; keeping the previous one");
    return;
  }
  use_engine(std::move(whole));
}

void EngineHost::use_engine(std::shared_ptr<const engine::Engine> engine) {
  engine_ = std::move(engine);
  deps_.executors->configure(engine_->executors());
  user_.use_engine(engine_);
  if (on_reloaded_) on_reloaded_(*engine_);
  watch_skills();
}

boost::asio::awaitable<std::shared_ptr<const engine::Engine>> EngineHost::loaded_engine() {
  if (settings_ready_) co_await settings_ready_->wait();
  co_return engine_;
}

boost::asio::awaitable<bool> EngineHost::skills_loaded(support::CancelSource* cancel) {
  if (!skills_ready_) co_return true;  // no startup load (sessions made by hand, in tests)
  co_return co_await skills_ready_->wait(cancel);
}

boost::asio::awaitable<std::shared_ptr<const engine::Engine>> EngineHost::engine_for_session() {
  auto engine = co_await loaded_engine();
  if (!engine->failed()) co_return engine;
  // The files are read again on every attempt, so fixing them is enough: no restart, no reload.
  // Only the settings decide here; a problem in the rest is the session's to show (complete_set_up).
  auto job = [root = deps_.config_root] {
    auto options = engine::Engine::default_options(root);
    options.skills = false;
    options.extensions = false;
    return load_engine_logged(options);
  };
  auto fresh = co_await support::run_blocking(*deps_.pool, std::move(job));
  if (fresh->failed())
    throw AgentError(AgentError::Kind::Internal, broken_config_message(*fresh, "no session can start", "the next session"));
  co_return fresh;
}

boost::asio::awaitable<std::shared_ptr<const engine::Engine>> EngineHost::complete_engine(support::CancelSource* cancel) {
  if (engine_ready_ && !co_await engine_ready_->wait(cancel)) co_return nullptr;
  if (!engine_->failed()) co_return engine_;
  auto job = [root = deps_.config_root] { return load_engine_logged(root); };
  auto fresh = co_await support::run_blocking(*deps_.pool, std::move(job));
  if (fresh->failed()) co_return fresh;  // with the problems as they are now
  if (engine_->failed()) use_engine(std::move(fresh));  // fixed (unless a reload got there first): every session takes it
  co_return engine_;
}

void EngineHost::reload_config() {
  whole_reload_pending_ = true;
  run_reloads();
}

boost::asio::awaitable<std::shared_ptr<const engine::Engine>> EngineHost::reload_now() {
  co_await reload_whole();
  co_return engine_;
}

void EngineHost::skills_changed(engine::SkillWatcher::Change change) {
  if (change.whole) return reload_config();
  changed_skill_dirs_.insert(change.skill_dirs.begin(), change.skill_dirs.end());
  run_reloads();
}

void EngineHost::run_reloads() {
  if (reloading_) return;  // the running loop takes what came in meanwhile, with the newest files
  reloading_ = true;
  boost::asio::co_spawn(
      deps_.io,
      [this]() -> boost::asio::awaitable<void> {
        while (whole_reload_pending_ || !changed_skill_dirs_.empty()) {
          if (!whole_reload_pending_) {
            std::vector<std::filesystem::path> dirs(changed_skill_dirs_.begin(), changed_skill_dirs_.end());
            changed_skill_dirs_.clear();
            if (co_await reload_skills(std::move(dirs))) continue;
          }
          whole_reload_pending_ = false;
          changed_skill_dirs_.clear();  // the whole load reads them too
          co_await reload_whole();
        }
        reloading_ = false;
      },
      boost::asio::detached);
}

boost::asio::awaitable<void> EngineHost::reload_whole() {
  auto job = [root = deps_.config_root] { return load_engine_logged(root); };
  auto fresh = co_await support::run_blocking(*deps_.pool, std::move(job));
  if (fresh->failed()) {
    spdlog::error("the configuration did not load; keeping the previous one");
    co_return;
  }
  co_await skills_ready_->wait();
  spdlog::info("configuration reloaded: {} skills, {} plugins", fresh->user_level_skills().size(), fresh->plugins().size());
  use_engine(std::move(fresh));
}

boost::asio::awaitable<bool> EngineHost::reload_skills(std::vector<std::filesystem::path> dirs) {
  const auto started = std::chrono::steady_clock::now();
  auto base = engine_;
  struct Result {
    std::shared_ptr<const engine::Engine> engine;
    std::vector<engine::Engine::SkillSwap> swaps;
  };
  auto job = [base, dirs] {
    Result r;
    engine::Diagnostics diags;
    r.engine = base->with_skills_read_again(dirs, r.swaps, diags);
    for (const auto& d : diags) spdlog::warn("config: {}", d.to_string());
    return r;
  };
  auto r = co_await support::run_blocking(*deps_.pool, std::move(job));
  if (!r.engine) {
    whole_reload_pending_ = true;
    co_return false;
  }
  if (engine_ != base) {  // another engine came in meanwhile: read the files again on top of it
    changed_skill_dirs_.insert(dirs.begin(), dirs.end());
    co_return true;
  }
  using std::chrono::steady_clock;
  auto us = [](steady_clock::duration d) { return std::chrono::duration_cast<std::chrono::microseconds>(d).count(); };
  const auto in_use = use_skills(std::move(r.engine), r.swaps);
  spdlog::info("skills reloaded: {} SKILL.md file(s) read again in {} µs (the sessions' slash commands sent in {} µs more)",
               dirs.size(), us(in_use - started), us(steady_clock::now() - in_use));
  co_return true;
}

std::chrono::steady_clock::time_point EngineHost::use_skills(std::shared_ptr<const engine::Engine> engine,
                                                                 const std::vector<engine::Engine::SkillSwap>& swaps) {
  auto replaced = std::exchange(engine_, std::move(engine));
  // Most edits change a skill's text, not what its slash command shows: then no session's list
  // is built again (20,000 commands: tens of milliseconds).
  const bool commands_same = std::all_of(swaps.begin(), swaps.end(), [](const engine::Engine::SkillSwap& s) {
    return s.before && s.after && s.before->name == s.after->name && s.before->description == s.after->description &&
           s.before->argument_hint == s.after->argument_hint;
  });
  auto show_commands = user_.use_skills(engine_, swaps, commands_same);
  // The engine replaced indexes every skill (20,000 entries): freed on the pool, not on the io
  // thread, once no session holds it.
  boost::asio::post(*deps_.pool, [replaced = std::move(replaced)]() mutable { replaced.reset(); });
  const auto in_use = std::chrono::steady_clock::now();
  show_commands();
  return in_use;
}

void EngineHost::watch_skills() {
  if (!deps_.watch_skill_files || !engine_->skills_loaded()) return;
  std::vector<const void*> folders;
  for (const auto& place : engine_->skill_places()) folders.push_back(place.folders.get());
  if (folders == watched_folders_) return;
  watched_folders_ = std::move(folders);
  if (!skill_watcher_)
    skill_watcher_ = std::make_unique<engine::SkillWatcher>(
        deps_.io, *deps_.pool, [this](engine::SkillWatcher::Change c) { skills_changed(std::move(c)); });
  skill_watcher_->watch(engine_->skill_places());
}

}  // namespace runtime
