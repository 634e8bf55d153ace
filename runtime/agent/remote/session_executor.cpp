#include "runtime/agent/remote/session_executor.hpp"

#include <spdlog/spdlog.h>

#include "runtime/agent/remote/executor_files.hpp"
#include "support/run_blocking.hpp"

namespace runtime {

void rebuild_view(Session& s) {
  s.services.view = s.services.engine->session_view(s.settings.cwd, s.settings.agent_name, s.services.executor_files.get());
  for (const auto& d : s.services.view.diagnostics) spdlog::warn("config: {}", d.to_string());
  for (const auto& f : s.services.view.agents_md) s.conversation.agents_md_included.insert(f.path);
}

boost::asio::awaitable<void> read_view(Session& s) {
  s.services.executor_files.reset();
  const auto& set = s.settings;
  std::shared_ptr<Executor> ex;
  if (set.executor != config::kLocalExecutor) ex = use_executor(s, set.executor);
  if (ex) {
    engine::ExecutorSnapshot snap;
    snap.executor = s.settings.executor;
    try {
      snap = co_await read_executor_files(*ex, true, nullptr);
    } catch (const ExecutorError& e) {
      spdlog::warn("session {}: skills and AGENTS.md of executor {} not read: {}", s.id, s.settings.executor, e.what());
      notify(s, {NoticeSeverity::Warning, "Skills and AGENTS.md of executor `" + s.settings.executor + "` could not be read",
                 e.what()});
    }
    if (auto notice = ex->take_notice())
      notify(s, {NoticeSeverity::Info, "Executor `" + s.settings.executor + "` runs each operation as a command", *notice});
    s.services.executor_files = std::make_shared<const engine::ExecutorSnapshot>(std::move(snap));
  }
  rebuild_view(s);
}

boost::asio::awaitable<void> reread_agents_md(Session& s, boost::asio::thread_pool& pool, support::CancelSource* cancel) {
  if (!s.services.executor_files) {
    auto job = [cwd = s.settings.cwd] { return engine::load_agents_md_chain(cwd); };
    s.services.view.agents_md = co_await support::run_blocking(pool, std::move(job));
  } else if (auto ex = use_executor(s, s.settings.executor)) {
    try {
      s.services.view.agents_md = (co_await read_executor_files(*ex, false, cancel)).agents_md;
    } catch (const ExecutorError& e) {  // the last ones read stay
      spdlog::warn("session {}: AGENTS.md of executor {} not read again: {}", s.id, s.settings.executor, e.what());
    }
  }
  for (const auto& f : s.services.view.agents_md) s.conversation.agents_md_included.insert(f.path);
}

}  // namespace runtime
