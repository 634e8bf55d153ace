#include "runtime/mcp/mcp_manager.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "bridge/mcp/naming.hpp"
#include "runtime/tools/mcp_tool.hpp"

namespace runtime::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using bridge::mcp::Client;
using bridge::mcp::McpError;
using bridge::mcp::ServerSpec;
using bridge::mcp::ToolInfo;

const char* state_name(ServerState s) {
  switch (s) {
    case ServerState::NotStarted: return "not started";
    case ServerState::Starting: return "starting";
    case ServerState::Ready: return "ready";
    case ServerState::Failed: return "failed";
    case ServerState::Crashed: return "crashed";
    case ServerState::Closed: return "closed";
  }
  return "?";
}

namespace {
struct Server {
  explicit Server(asio::any_io_executor ex, ServerSpec s) : spec(std::move(s)), started(ex) {}
  ServerSpec spec;
  std::shared_ptr<Client> client;
  ServerState state = ServerState::NotStarted;
  std::string error;
  std::vector<ToolInfo> tools;
  asio::steady_timer started;  // waiters park here while Starting
  int generation = 0;
};
}  // namespace

class McpManager::Impl : public std::enable_shared_from_this<McpManager::Impl> {
 public:
  Impl(Deps deps, std::vector<ServerSpec> specs) : deps_(std::move(deps)) {
    for (auto& s : specs) {
      specs_.push_back(s);
      servers_.push_back(std::make_shared<Server>(deps_.executor, std::move(s)));
    }
  }

  void event(Server& s, const std::string& detail) {
    spdlog::info("mcp {}: {}{}{}", s.spec.id, s.state == ServerState::Ready ? "restarted" : state_name(s.state),
                 detail.empty() ? "" : ": ", detail);
    if (deps_.on_server_event) deps_.on_server_event(s.spec.id, s.state, detail);
  }

  // Connects and lists the tools; state ends Ready or Failed.
  // Marks the server Starting (so others wait instead of starting it twice); returns the generation.
  int begin_start(Server& s) {
    s.state = ServerState::Starting;
    s.error.clear();
    s.started.expires_at(asio::steady_timer::time_point::max());
    return ++s.generation;
  }

  asio::awaitable<void> start(std::shared_ptr<Server> s, int gen, bool restart) {
    auto self = shared_from_this();
    try {
      bridge::mcp::TransportDeps tdeps = deps_.tunnel;
      tdeps.server_id_for_logs = s->spec.id;
      auto transport = bridge::mcp::make_transport(deps_.executor, s->spec, tdeps);
      Client::Options opts;
      opts.client_name = "openvaala";
      opts.client_version = OPENVAALA_VERSION;
      opts.log_id = s->spec.id;
      auto roots = deps_.roots;
      opts.roots = [roots] {
        std::vector<bridge::mcp::Root> out;
        for (const auto& r : roots) out.push_back({bridge::mcp::file_uri(r.string()), r.filename().string()});
        return out;
      };
      std::weak_ptr<Server> weak = s;
      std::weak_ptr<Impl> weak_self = weak_from_this();
      opts.on_closed = [weak, weak_self, gen](const std::string& reason) {
        auto srv = weak.lock();
        auto me = weak_self.lock();
        if (!srv || !me || srv->generation != gen || srv->state == ServerState::Closed) return;
        const bool was_ready = srv->state == ServerState::Ready;
        srv->state = ServerState::Crashed;
        srv->error = reason;
        // Closed while starting: start() reports it once, as a server that could not start.
        if (was_ready) me->event(*srv, reason + " (it will be restarted on next use)");
      };
      auto client = std::make_shared<Client>(deps_.executor, std::move(transport), std::move(opts));
      s->client = client;
      co_await client->connect(s->spec.startup_timeout);
      auto tools = co_await client->list_tools(s->spec.startup_timeout);
      if (s->generation != gen || s->state == ServerState::Closed) co_return;
      s->tools = std::move(tools);
      s->state = ServerState::Ready;
      spdlog::info("mcp {}: {} ({}), {} tools", s->spec.id, restart ? "restarted" : "ready", client->describe(),
                   s->tools.size());
      if (restart) event(*s, "");
    } catch (const std::exception& e) {
      if (s->generation == gen && s->state != ServerState::Closed) {
        s->state = ServerState::Failed;
        s->error = e.what();
        if (s->client) s->client->kill_now();
        s->client.reset();
        event(*s, std::string(bridge::mcp::transport_name(s->spec.transport)) + ": " + e.what());
      }
    }
    s->started.cancel();
  }

  // Ready afterwards, or Failed/Crashed with s->error.
  asio::awaitable<void> ensure(std::shared_ptr<Server> s, support::CancelSource* cancel, bool retry_failed) {
    auto self = shared_from_this();
    if (s->state == ServerState::Ready && s->client && s->client->connected()) {
      if (s->client->tools_stale()) {
        try {
          s->tools = co_await s->client->list_tools(s->spec.startup_timeout, cancel);
        } catch (const McpError& e) {
          spdlog::warn("mcp {}: refreshing the tool list failed: {}", s->spec.id, e.what());
        }
      }
      co_return;
    }
    if (s->state == ServerState::Closed) co_return;
    if (s->state == ServerState::NotStarted || s->state == ServerState::Crashed ||
        (s->state == ServerState::Ready) || (retry_failed && s->state == ServerState::Failed)) {
      if (s->client) {
        s->client->kill_now();
        s->client.reset();
      }
      const bool restart = s->state == ServerState::Crashed || s->state == ServerState::Ready;
      const int gen = begin_start(*s);
      co_await start(s, gen, restart);
      co_return;
    }
    support::CancelSource::Registration reg;
    if (cancel) reg = cancel->on_cancel([s] { s->started.cancel(); });
    while (s->state == ServerState::Starting && !(cancel && cancel->cancelled()))
      co_await s->started.async_wait(asio::as_tuple(asio::use_awaitable));
  }

  asio::awaitable<json::object> call(std::shared_ptr<Server> s, std::string tool, json::object args,
                                     support::CancelSource* cancel, Client::ProgressFn progress) {
    auto self = shared_from_this();
    if (s->state != ServerState::Ready || !s->client || !s->client->connected()) {
      co_await ensure(s, cancel, true);
      if (s->state != ServerState::Ready) throw McpError(McpError::Kind::Transport, s->error.empty() ? "not running" : s->error);
    }
    auto client = s->client;
    co_return co_await client->call_tool(tool, std::move(args), s->spec.tool_timeout, cancel, std::move(progress));
  }

  Deps deps_;
  std::vector<ServerSpec> specs_;
  std::vector<std::shared_ptr<Server>> servers_;
};

McpManager::McpManager(Deps deps, std::vector<ServerSpec> servers)
    : impl_(std::make_shared<Impl>(std::move(deps), std::move(servers))) {}

McpManager::~McpManager() { kill_now(); }

const std::vector<ServerSpec>& McpManager::specs() const { return impl_->specs_; }

void McpManager::start_all() {
  for (auto& s : impl_->servers_) {
    if (s->state != ServerState::NotStarted) continue;
    auto impl = impl_;
    const int gen = impl->begin_start(*s);
    asio::co_spawn(impl_->deps_.executor, [impl, s, gen]() { return impl->start(s, gen, false); }, asio::detached);
  }
}

asio::awaitable<std::vector<std::unique_ptr<tools::Tool>>> McpManager::tools_for_turn(support::CancelSource* cancel) {
  auto impl = impl_;
  std::vector<std::unique_ptr<tools::Tool>> out;
  std::set<std::string> names;
  for (auto& s : impl->servers_) {
    if (cancel && cancel->cancelled()) break;
    // A required server gets another try each turn; an optional one that failed stays off
    // until it is asked for by name (a tool call restarts it).
    co_await impl->ensure(s, cancel, s->spec.required);
    if (s->state != ServerState::Ready) {
      if (s->spec.required && !(cancel && cancel->cancelled()))
        throw RequiredServerUnavailable("The required MCP server '" + s->spec.id + "'" +
                                (s->spec.origin.empty() ? "" : " (" + s->spec.origin + ")") +
                                " could not be reached: " + (s->error.empty() ? state_name(s->state) : s->error));
      continue;
    }
    std::set<std::string> offered;
    for (const auto& t : s->tools) {
      if (s->spec.tools && std::find(s->spec.tools->begin(), s->spec.tools->end(), t.name) == s->spec.tools->end())
        continue;
      offered.insert(t.name);
      auto exposed = bridge::mcp::qualified_tool_name(s->spec.id, t.name);
      if (!names.insert(exposed).second) {
        spdlog::warn("mcp {}: skipping tool {}: the name {} is already taken", s->spec.id, t.name, exposed);
        continue;
      }
      std::weak_ptr<McpManager::Impl> weak = impl;
      std::weak_ptr<Server> weak_server = s;
      tools::McpCallFn call = [weak, weak_server](const std::string& tool, json::object args, support::CancelSource* c,
                                                  Client::ProgressFn progress) -> asio::awaitable<json::object> {
        auto me = weak.lock();
        auto srv = weak_server.lock();
        if (!me || !srv) throw McpError(McpError::Kind::Closed, "the session's MCP servers were closed");
        co_return co_await me->call(srv, tool, std::move(args), c, std::move(progress));
      };
      out.push_back(tools::make_mcp_tool(exposed, s->spec.id, t, std::move(call)));
    }
    if (s->spec.tools)
      for (const auto& want : *s->spec.tools)
        if (!offered.count(want)) spdlog::warn("mcp {}: the server has no tool named '{}' (listed in tools)", s->spec.id, want);
  }
  co_return out;
}

std::vector<ServerStatus> McpManager::status() const {
  std::vector<ServerStatus> out;
  for (const auto& s : impl_->servers_)
    out.push_back({s->spec.id, bridge::mcp::transport_name(s->spec.transport), s->state, s->error, s->tools.size(),
                   s->spec.required});
  return out;
}

asio::awaitable<void> McpManager::close() {
  auto impl = impl_;
  for (auto& s : impl->servers_) {
    s->state = ServerState::Closed;
    ++s->generation;
    s->started.cancel();
    if (auto c = std::move(s->client)) co_await c->close();
  }
}

void McpManager::kill_now() {
  if (!impl_) return;
  for (auto& s : impl_->servers_) {
    s->state = ServerState::Closed;
    ++s->generation;
    s->started.cancel();
    if (auto c = std::move(s->client)) c->kill_now();
  }
}

}  // namespace runtime::mcp
