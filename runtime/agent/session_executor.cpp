// A session's default executor (DESIGN §10): switching it, and the skills and AGENTS.md read
// there — at open, on a switch, every turn (AGENTS.md) and, for other executors, after their
// first tool use.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "runtime/agent/executor_files.hpp"
#include "runtime/agent/journal.hpp"
#include "runtime/agent/session_manager.hpp"
#include "runtime/mcp/mcp_manager.hpp"
#include "support/run_blocking.hpp"

namespace runtime {

boost::asio::awaitable<void> SessionManager::set_executor(Session& session, const std::string& executor) {
  if (!session.engine->has_executor(executor))
    throw AgentError(AgentError::Kind::InvalidParams,
                     "there is no executor '" + executor + "' (available: " + executor_list(*session.engine) + ")");
  const std::string before = session.executor;
  session.executor = executor;
  record(session, sessions::ExecutorChange{executor});
  if (before == executor) co_return;
  co_await read_view(session);
  send_commands_if_changed(session);
  co_await move_mcp_servers(session, before);
}

// A configured MCP server runs on the session's executor when its `executors:` lists it: after
// a switch that moves any of them, the session's servers are stopped and started again where
// they now belong (the editor's own servers with them: they are one manager).
boost::asio::awaitable<void> SessionManager::move_mcp_servers(Session& session, const std::string& before) {
  const bool moves = std::any_of(session.view.mcp_servers.begin(), session.view.mcp_servers.end(), [&](const auto& c) {
    return mcp_executor(c, before) != mcp_executor(c, session.executor);
  });
  auto it = sessions_.find(session.id);
  if (!moves || !session.mcp || it == sessions_.end()) co_return;
  spdlog::info("session {}: executor {} -> {}: restarting its MCP servers", session.id, before, session.executor);
  co_await restart_mcp_servers(it->second);  // (a copy: the session may close while we wait)
}

// The session's servers stopped and placed again (the editor's own with them: one manager).
boost::asio::awaitable<void> SessionManager::restart_mcp_servers(std::shared_ptr<Session> keep) {
  Session& session = *keep;
  auto old = std::exchange(session.mcp, nullptr);
  auto editor_servers = old->editor_specs();
  co_await old->close();
  if (!co_await make_session_mcp(keep, std::move(editor_servers))) co_return;  // closed or switched again meanwhile
  send_commands_if_changed(session);
  session.mcp->start_all();
}

// A required server left out because its executor did not answer: before each turn that
// executor is tried again, and the servers are placed again once it answers; while a required
// server is still out, the turn fails as for a required server that cannot be reached.
boost::asio::awaitable<void> SessionManager::place_required_mcp_servers(std::shared_ptr<Session> session) {
  Session& s = *session;
  if (s.required_mcp_left_out.empty() || !s.mcp) co_return;
  auto links = co_await connect_mcp_executors(s);
  const bool back = std::any_of(s.required_mcp_left_out.begin(), s.required_mcp_left_out.end(), [&](const auto& kv) {
    return kv.second.unreachable && !links.unreachable.count(kv.second.executor);
  });
  if (back && s.mcp && sessions_.count(s.id)) co_await restart_mcp_servers(session);
  if (!s.required_mcp_left_out.empty())
    throw mcp::RequiredServerUnavailable(s.required_mcp_left_out.begin()->second.error);
}

boost::asio::awaitable<void> SessionManager::read_view(Session& s) {
  s.executor_files.reset();
  std::shared_ptr<Executor> ex;
  if (s.executor != config::kLocalExecutor && s.executors) ex = s.executors->find(s.executor, s.cwd);
  if (ex) {
    engine::ExecutorSnapshot snap;
    snap.executor = s.executor;
    try {
      snap = co_await read_executor_files(*ex, true, nullptr);
    } catch (const ExecutorError& e) {
      spdlog::warn("session {}: skills and AGENTS.md of executor {} not read: {}", s.id, s.executor, e.what());
      notify(s, {NoticeSeverity::Warning, "Skills and AGENTS.md of executor `" + s.executor + "` could not be read",
                 e.what()});
    }
    s.executor_files = std::make_shared<const engine::ExecutorSnapshot>(std::move(snap));
  }
  s.view = s.engine->session_view(s.cwd, s.agent_name, s.executor_files.get());
  for (const auto& d : s.view.diagnostics) spdlog::warn("config: {}", d.to_string());
  for (const auto& f : s.view.agents_md) s.agents_md_included.insert(f.path);
}

boost::asio::awaitable<void> SessionManager::reread_agents_md(Session& s, support::CancelSource* cancel) {
  if (!s.executor_files) {
    auto job = [cwd = s.cwd] { return engine::load_agents_md_chain(cwd); };
    s.view.agents_md = co_await support::run_blocking(*deps_.pool, std::move(job));
  } else if (auto ex = s.executors ? s.executors->find(s.executor, s.cwd) : nullptr) {
    try {
      s.view.agents_md = (co_await read_executor_files(*ex, false, cancel)).agents_md;
    } catch (const ExecutorError& e) {  // the last ones read stay
      spdlog::warn("session {}: AGENTS.md of executor {} not read again: {}", s.id, s.executor, e.what());
    }
  }
  for (const auto& f : s.view.agents_md) s.agents_md_included.insert(f.path);
}

void SessionManager::notify(Session& s, Notice notice) {
  if (!s.announced) s.held_notices.push_back(std::move(notice));
  else if (sessions_.count(s.id)) deps_.host->emit(s.id, std::move(notice));
}

}  // namespace runtime
