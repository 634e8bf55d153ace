// The engine a connection's sessions use: the startup's three-step load (settings, then plugins,
// hooks and MCP files, then skills), a session's set-up once the later steps are in (or refused
// while they do not load), and reloads.
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <utility>

#include "runtime/agent/session_manager.hpp"
#include "runtime/mcp/mcp_manager.hpp"
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

// `what_fails`: "no session can start", "this prompt cannot run"; `read_again`: when the files are read again.
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

}  // namespace

void SessionManager::start_loading_engine() {
  settings_ready_ = std::make_unique<support::OneShotEvent>(deps_.executor);
  engine_ready_ = std::make_unique<support::OneShotEvent>(deps_.executor);
  skills_ready_ = std::make_unique<support::OneShotEvent>(deps_.executor);
  boost::asio::co_spawn(
      deps_.executor,
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
        executors_->configure(engine_->executors());
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

void SessionManager::adopt_whole_engine(std::shared_ptr<const engine::Engine> core, std::shared_ptr<const engine::Engine> whole) {
  if (engine_ != core) return;  // a reload or a retry (engine_for_session) put a whole engine in first
  if (whole->failed() && !core->failed()) {  // the files changed in between: as a reload that fails
    spdlog::error("the configuration did not load; keeping the previous one");
    return;
  }
  use_engine(std::move(whole));
}

void SessionManager::use_engine(std::shared_ptr<const engine::Engine> engine) {
  engine_ = std::move(engine);
  executors_->configure(engine_->executors());
  for (auto& [_, s] : sessions_) {
    s->engine = engine_;
    refresh_view(*s);
  }
  if (on_reloaded_) on_reloaded_(*engine_);
}

boost::asio::awaitable<std::shared_ptr<const engine::Engine>> SessionManager::loaded_engine() {
  if (settings_ready_) co_await settings_ready_->wait();
  co_return engine_;
}

boost::asio::awaitable<bool> SessionManager::skills_loaded(support::CancelSource* cancel) {
  if (!skills_ready_) co_return true;  // no startup load (sessions made by hand, in tests)
  co_return co_await skills_ready_->wait(cancel);
}

boost::asio::awaitable<std::shared_ptr<const engine::Engine>> SessionManager::engine_for_session() {
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

boost::asio::awaitable<std::shared_ptr<const engine::Engine>> SessionManager::complete_engine(support::CancelSource* cancel) {
  if (engine_ready_ && !co_await engine_ready_->wait(cancel)) co_return nullptr;
  if (!engine_->failed()) co_return engine_;
  auto job = [root = deps_.config_root] { return load_engine_logged(root); };
  auto fresh = co_await support::run_blocking(*deps_.pool, std::move(job));
  if (fresh->failed()) co_return fresh;  // with the problems as they are now
  if (engine_->failed()) use_engine(std::move(fresh));  // fixed (unless a reload got there first): every session takes it
  co_return engine_;
}

boost::asio::awaitable<bool> SessionManager::complete_set_up(std::shared_ptr<Session> session, support::CancelSource* cancel) {
  Session& s = *session;
  if (s.set_up) co_return true;
  if (!s.engine->extensions_loaded() || s.engine->failed()) {
    auto engine = co_await complete_engine(cancel);
    if (!engine || !sessions_.count(s.id)) co_return false;
    if (engine->failed())
      throw AgentError(AgentError::Kind::Internal, broken_config_message(*engine, "this session cannot run a prompt", "the next prompt"));
    if (s.engine != engine) {
      s.engine = std::move(engine);
      rebuild_view(s);
      send_commands_if_changed(s);
    }
  }
  if (!s.mcp) co_await make_session_mcp(session, std::exchange(s.editor_servers, {}));
  if (!s.mcp || !sessions_.count(s.id)) co_return false;  // closed meanwhile
  s.set_up = true;
  send_commands_if_changed(s);
  s.mcp->start_all();
  co_return true;
}

boost::asio::awaitable<bool> SessionManager::make_session_mcp(std::shared_ptr<Session> session,
                                                              std::vector<bridge::mcp::ServerSpec> editor_servers) {
  Session& s = *session;
  auto links = co_await connect_mcp_executors(s);
  if (s.mcp || !sessions_.count(s.id)) co_return false;  // closed (or given servers by another path) meanwhile
  make_mcp(session, std::move(editor_servers), links);
  co_return true;
}

boost::asio::awaitable<void> SessionManager::set_up(std::shared_ptr<Session> session, OpenRequest::Kind kind) {
  bool ready = false;
  try {
    ready = co_await complete_set_up(session, session->closing.get());
  } catch (const AgentError& e) {  // the configuration does not load: its turns are refused until it does
    spdlog::error("session {}: {}", session->id, e.what());
    notify(*session, {NoticeSeverity::Error, "Fix the configuration before the first prompt", e.what(), {}});
  }
  if (ready)
    co_await run_session_start_hooks(session, kind);  // sets `started`
  else
    session->started->set();  // the first turn must not wait forever
}

void SessionManager::reload_config() {
  if (reloading_) {  // a reload is running: do one more after it, with the newest files
    reload_again_ = true;
    return;
  }
  reloading_ = true;
  boost::asio::co_spawn(
      deps_.executor,
      [this]() -> boost::asio::awaitable<void> {
        do {
          reload_again_ = false;
          auto job = [root = deps_.config_root] { return load_engine_logged(root); };
          auto fresh = co_await support::run_blocking(*deps_.pool, std::move(job));
          if (fresh->failed()) {
            spdlog::error("the configuration did not load; keeping the previous one");
            continue;
          }
          co_await skills_ready_->wait();
          spdlog::info("configuration reloaded: {} skills, {} plugins", fresh->user_level_skills().size(),
                       fresh->plugins().size());
          use_engine(std::move(fresh));
        } while (reload_again_);
        reloading_ = false;
      },
      boost::asio::detached);
}

}  // namespace runtime
