#include "runtime/agent/remote/session_mcp.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "runtime/mcp/mcp_manager.hpp"
#include "runtime/mcp/server_specs.hpp"

namespace runtime {

namespace {
Notice mcp_notice(const std::string& server, mcp::ServerState state, const std::string& detail) {
  const std::string name = "MCP server `" + server + "`";
  switch (state) {
    case mcp::ServerState::Failed: return {NoticeSeverity::Error, name + " could not start", detail, {}};
    case mcp::ServerState::Crashed: return {NoticeSeverity::Warning, name + " crashed", detail, {}};
    case mcp::ServerState::Ready: return {NoticeSeverity::Info, name + " restarted", detail, {}};
    case mcp::ServerState::NeedsSignIn:
      return {NoticeSeverity::Warning, name + " needs sign-in",
              "The next prompt that uses it shows a sign-in link; or run `openvaala mcp login " + server + "`.", {}};
    default: return {NoticeSeverity::Info, name + ": " + mcp::state_name(state), detail, {}};
  }
}
}  // namespace

// Nothing starts here: start_all runs after the session/new|load answer (SessionManager::complete_set_up).
void SessionMcp::make(const std::shared_ptr<Session>& session, std::vector<bridge::mcp::ServerSpec> editor_servers,
                      const McpExecutorLinks& links) {
  Session& s = *session;
  std::vector<bridge::mcp::ServerSpec> configured;
  s.services.required_mcp_left_out.clear();
  for (const auto& c : s.services.view.mcp_servers) {
    // On its executor (DESIGN §10); one that cannot run there is left out, and the user told why;
    // a required one also fails the turns until it can run there.
    const auto where = mcp_executor(c, s.settings.executor);
    auto spec = mcp::spec_from_config(c, s.settings.cwd);
    const auto down = links.unreachable.find(where);
    try {
      if (down != links.unreachable.end()) throw ExecutorError(down->second);
      configured.push_back(place_mcp_server(spec, c, s, links));
    } catch (const ExecutorError& e) {
      spdlog::warn("MCP server {}: not started on executor {}: {}", c.id, where, e.what());
      notify(s, {NoticeSeverity::Error, "MCP server `" + c.id + "` could not start", e.what()});
      if (c.required)
        s.services.required_mcp_left_out[c.id] = {where, down != links.unreachable.end(),
                                                  mcp::required_unreachable_message(spec, e.what())};
    }
  }
  for (auto& e : editor_servers) {
    std::erase_if(configured, [&](const auto& x) { return x.id == e.id; });
    mcp::add_oauth_to_editor_server(e);
  }
  // The editor's extra folders are roots too; they are part of the sharing key (see McpServerPool).
  std::vector<std::filesystem::path> roots{s.settings.cwd};
  roots.insert(roots.end(), s.settings.additional_roots.begin(), s.settings.additional_roots.end());
  mcp::McpManager::Deps deps{deps_.io, deps_.tunnel, std::move(roots), nullptr, servers_};
  deps.tunnel.spawn_pool = deps_.pool;
  const auto modes = deps_.editor->elicitation_modes();
  deps.elicit_form = modes.form;
  deps.elicit_url = modes.url;
  deps.on_elicitation_complete = [this](const std::string& id) { deps_.editor->elicitation_complete(id); };
  // The prompts are slash commands: the editor's list follows the servers' lists.
  deps.on_prompts_changed = [this, weak = std::weak_ptr<Session>(session)] {
    auto s = weak.lock();
    if (s && deps_.is_open(s->id)) deps_.show_commands(*s);
  };
  // A server that fails while session/new is still being answered is told once the editor knows the session.
  deps.on_server_event = [this, weak = std::weak_ptr<Session>(session)](const std::string& server, mcp::ServerState state,
                                                                       const std::string& detail) {
    spdlog::warn("MCP server {}: {} {}", server, mcp::state_name(state), detail);
    if (auto s = weak.lock()) notify(*s, mcp_notice(server, state, detail));
  };
  s.services.mcp = std::make_shared<mcp::McpManager>(std::move(deps), std::move(configured), std::move(editor_servers));
}

boost::asio::awaitable<bool> SessionMcp::connect_and_make(std::shared_ptr<Session> session,
                                                         std::vector<bridge::mcp::ServerSpec> editor_servers) {
  Session& s = *session;
  auto links = co_await connect_mcp_executors(s);
  if (s.services.mcp || !deps_.is_open(s.id)) co_return false;  // closed (or given servers by another path) meanwhile
  make(session, std::move(editor_servers), links);
  co_return true;
}

// The editor's own servers restart with them: they are one manager.
boost::asio::awaitable<void> SessionMcp::follow_executor(std::shared_ptr<Session> keep, const std::string& before) {
  Session& session = *keep;  // (`keep`: the session may close while we wait)
  const auto& configured = session.services.view.mcp_servers;
  const bool moves = std::any_of(configured.begin(), configured.end(), [&](const auto& c) {
    return mcp_executor(c, before) != mcp_executor(c, session.settings.executor);
  });
  if (!moves || !session.services.mcp || !deps_.is_open(session.id)) co_return;
  spdlog::info("session {}: executor {} -> {}: restarting its MCP servers", session.id, before, session.settings.executor);
  co_await restart(keep);
}

// The session's servers stopped and placed again (the editor's own with them: one manager).
boost::asio::awaitable<void> SessionMcp::restart(std::shared_ptr<Session> keep) {
  Session& session = *keep;
  auto old = std::exchange(session.services.mcp, nullptr);
  auto editor_servers = old->editor_specs();
  co_await old->close();
  if (!co_await connect_and_make(keep, std::move(editor_servers))) co_return;  // closed or switched again meanwhile
  deps_.show_commands(session);
  session.services.mcp->start_all();
}

// A required server left out because its executor did not answer: before each turn that
// executor is tried again, and the servers are placed again once it answers; while a required
// server is still out, the turn fails as for a required server that cannot be reached.
boost::asio::awaitable<void> SessionMcp::place_required(std::shared_ptr<Session> session) {
  Session& s = *session;
  if (s.services.required_mcp_left_out.empty() || !s.services.mcp) co_return;
  auto links = co_await connect_mcp_executors(s);
  const auto& left_out = s.services.required_mcp_left_out;
  const bool back = std::any_of(left_out.begin(), left_out.end(), [&](const auto& kv) {
    return kv.second.unreachable && !links.unreachable.count(kv.second.executor);
  });
  if (back && s.services.mcp && deps_.is_open(s.id)) co_await restart(session);
  if (!s.services.required_mcp_left_out.empty())
    throw mcp::RequiredServerUnavailable(s.services.required_mcp_left_out.begin()->second.error);
}

}  // namespace runtime
