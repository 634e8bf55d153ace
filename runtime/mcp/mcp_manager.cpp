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
#include "support/one_shot_event.hpp"
#include "runtime/mcp/mcp_manager_impl.hpp"
#include "runtime/tools/mcp_resource_tools.hpp"
#include "runtime/tools/mcp_tool.hpp"

namespace runtime::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using bridge::mcp::McpError;
using bridge::mcp::ServerSpec;

std::string required_unreachable_message(const ServerSpec& spec, const std::string& why) {
  return "The required MCP server '" + spec.id + "'" + (spec.origin.empty() ? "" : " (" + spec.origin + ")") +
         " could not be reached: " + why;
}

McpManager::McpManager(Deps deps, std::vector<ServerSpec> servers, std::vector<ServerSpec> private_servers)
    : impl_(std::make_shared<Impl>(std::move(deps), std::move(servers), std::move(private_servers))) {}

McpManager::~McpManager() { kill_now(); }

const std::vector<ServerSpec>& McpManager::specs() const { return impl_->specs_; }
const std::vector<ServerSpec>& McpManager::editor_specs() const { return impl_->editor_specs_; }

void McpManager::start_all() {
  for (auto& e : impl_->entries_) e.server->start_in_background();
}

namespace {
constexpr std::chrono::seconds kSignInTimeout{600};

// Signs a server in that needs it (unless another process did meanwhile); empty, or why not.
asio::awaitable<std::string> sign_in(McpServer& s, bridge::mcp::oauth::SignInPresenter* presenter,
                                     support::CancelSource* cancel) {
  auto auth = s.authorizer();
  if (!auth) co_return "no OAuth for this server";
  if (!auth->reload()) {
    if (!presenter) co_return "nobody to ask";
    try {
      co_await auth->sign_in(*presenter, cancel, kSignInTimeout);
    } catch (const std::exception& e) {
      co_return std::string(e.what());
    }
  }
  co_await s.ensure(cancel, true);
  co_return s.state() == ServerState::NeedsSignIn ? "the server refused the new token" : "";
}

// A tool's calls go to its server through the manager, as long as the session has it.
tools::McpCallFn call_through(const std::shared_ptr<McpManager::Impl>& impl, const std::shared_ptr<McpServer>& server) {
  std::weak_ptr<McpManager::Impl> weak = impl;
  std::weak_ptr<McpServer> weak_server = server;
  return [weak, weak_server](const std::string& tool, json::object args, support::CancelSource* c,
                             bridge::mcp::Client::ProgressFn progress, tools::McpElicitFn elicit) -> asio::awaitable<json::object> {
    auto me = weak.lock();
    auto srv = weak_server.lock();
    // A shared server outlives the session that closed: its tools must not.
    if (!me || !srv || me->closed_) throw McpError(McpError::Kind::Closed, "the session's MCP servers were closed");
    co_return co_await srv->call(tool, std::move(args), c, std::move(progress), std::move(elicit));
  };
}

// The tools of one ready server, named mcp__<id>__<tool>, filtered by its `tools` list and capped
// by `offer.limits`; a name already offered in the turn is skipped.
void offer_tools(const std::shared_ptr<McpManager::Impl>& impl, const SessionServer& e, McpManager::TurnOffer& offer,
                 std::vector<std::unique_ptr<tools::Tool>>& out) {
  const auto& spec = e.spec;
  for (const auto* t : impl->tools_to_offer(spec, e.server->tools(), offer.limits.tools_per_server)) {
    auto exposed = bridge::mcp::qualified_tool_name(spec.id, t->name);
    if (!offer.names.insert(exposed).second) {
      spdlog::warn("mcp {}: skipping tool {}: the name {} is already taken", spec.id, t->name, exposed);
      continue;
    }
    out.push_back(tools::make_mcp_tool(exposed, spec.id, *t, call_through(impl, e.server), offer.limits.output_bytes));
  }
}

// Codex's resource tools, once a server offers resources (once per turn: `names` has them then).
void offer_resource_tools(const std::shared_ptr<McpManager::Impl>& impl, const std::vector<SessionServer>& servers,
                          std::set<std::string>& names, std::vector<std::unique_ptr<tools::Tool>>& out) {
  if (std::none_of(servers.begin(), servers.end(), [](const auto& e) { return e.server->has_resources(); })) return;
  for (auto& t : resource_tools(impl))
    if (names.insert(t->name()).second) out.push_back(std::move(t));
}

// Ends the bounded wait for optional servers when it times out or the turn is cancelled.
struct BoundedWait {
  support::CancelSource ended;
  support::CancelSource::Registration follow;
  asio::steady_timer timer;
  BoundedWait(asio::any_io_executor ex, support::CancelSource* turn, std::chrono::milliseconds bound) : timer(ex, bound) {
    if (turn) follow = turn->on_cancel([this] { ended.cancel(); });
    timer.async_wait([this](boost::system::error_code ec) {
      if (!ec) ended.cancel();  // (aborted: the wait is over and `this` may be gone)
    });
  }
};
}  // namespace

std::vector<const bridge::mcp::ToolInfo*> McpManager::Impl::tools_to_offer(const ServerSpec& spec,
                                                                         const std::vector<bridge::mcp::ToolInfo>& tools,
                                                                         std::size_t limit) {
  std::vector<const bridge::mcp::ToolInfo*> chosen;
  std::size_t left_out = 0;
  for (const auto& t : tools) {
    if (spec.tools && std::find(spec.tools->begin(), spec.tools->end(), t.name) == spec.tools->end()) continue;
    if (chosen.size() < limit) chosen.push_back(&t);
    else ++left_out;
  }
  if (spec.tools)
    for (const auto& want : *spec.tools)
      if (std::none_of(tools.begin(), tools.end(), [&](const auto& t) { return t.name == want; }))
        spdlog::warn("mcp {}: the server has no tool named '{}' (listed in tools)", spec.id, want);
  // Every tool's schema goes with every request: thousands would fill the model's context (and
  // providers refuse more than about 128 tools in all).
  if (left_out > 0 && capped_warned_.insert(spec.id).second) {
    warnings_.push_back("The MCP server '" + spec.id + "' offers " + std::to_string(chosen.size() + left_out) +
                        " tools; the model is offered the first " + std::to_string(chosen.size()) + " and " +
                        std::to_string(left_out) + " are left out (max_mcp_tools_per_server in config.yaml; or list " +
                        "the ones you want under the server's tools:).");
    spdlog::warn("{}", warnings_.back());
  }
  return chosen;
}

std::vector<std::string> McpManager::take_warnings() { return std::exchange(impl_->warnings_, {}); }

asio::awaitable<std::vector<std::unique_ptr<tools::Tool>>> McpManager::tools_for_turn(
    support::CancelSource* cancel, bridge::mcp::oauth::SignInPresenter* presenter, config::McpLimits limits,
    std::optional<std::chrono::milliseconds> optional_wait, TurnOffer* offer) {
  auto impl = impl_;
  std::vector<std::unique_ptr<tools::Tool>> out;
  TurnOffer own;
  TurnOffer& turn = offer ? *offer : own;
  turn.limits = limits;
  auto entries = impl->entries_;  // close() may empty the list while we wait
  std::optional<BoundedWait> bounded;
  if (optional_wait) {
    // The optional servers start (or restart) together, and are waited for together.
    for (auto& e : entries)
      if (!e.spec.required) e.server->start_in_background();
    bounded.emplace(impl->deps_.executor, cancel, *optional_wait);
  }
  std::vector<SessionServer> ready;
  for (auto& e : entries) {
    if (cancel && cancel->cancelled()) break;
    const auto& spec = e.spec;
    auto& s = *e.server;
    // A required server gets another try each turn; an optional one that failed stays off
    // until it is asked for by name (a tool call restarts it).
    co_await s.ensure(bounded && !spec.required ? &bounded->ended : cancel, spec.required);
    if (bounded && !spec.required && s.state() == ServerState::Starting) {
      turn.late.push_back(spec.id);  // joins at a later model request (join_late)
      continue;
    }
    std::string sign_in_failure;
    if (s.state() == ServerState::NeedsSignIn && !(cancel && cancel->cancelled())) {
      const bool ask = !impl->declined_.count(spec.id);
      sign_in_failure = co_await sign_in(s, ask ? presenter : nullptr, cancel);
      if (!sign_in_failure.empty() && !spec.required && !(cancel && cancel->cancelled())) impl->declined_.insert(spec.id);
    }
    if (s.state() == ServerState::NeedsSignIn && spec.required && !(cancel && cancel->cancelled()))
      throw RequiredServerUnavailable("The required MCP server '" + spec.id + "'" +
                                      (spec.origin.empty() ? "" : " (" + spec.origin + ")") + " needs sign-in" +
                                      (sign_in_failure.empty() ? "" : " (" + sign_in_failure + ")") +
                                      ": sign in when the editor shows the link, or run `openvaala mcp login " +
                                      spec.id + "`, then send the prompt again.");
    if (s.state() != ServerState::Ready) {
      if (spec.required && !(cancel && cancel->cancelled()))
        throw RequiredServerUnavailable(
            required_unreachable_message(spec, s.error().empty() ? state_name(s.state()) : s.error()));
      continue;
    }
    offer_tools(impl, e, turn, out);
    ready.push_back(e);
  }
  if (!(cancel && cancel->cancelled())) offer_resource_tools(impl, ready, turn.names, out);
  co_return out;
}

McpManager::Joined McpManager::join_late(TurnOffer& offer) {
  auto impl = impl_;
  Joined joined;
  std::vector<SessionServer> ready;
  for (const auto& e : impl->entries_) {
    auto late = std::find(offer.late.begin(), offer.late.end(), e.spec.id);
    if (late == offer.late.end() || e.server->state() == ServerState::Starting) continue;
    offer.late.erase(late);  // up, or failed (its failure was told as it happened)
    if (e.server->state() != ServerState::Ready || impl->closed_) continue;
    offer_tools(impl, e, offer, joined.tools);
    joined.servers.push_back(e.spec.id);
    ready.push_back(e);
  }
  offer_resource_tools(impl, ready, offer.names, joined.tools);
  return joined;
}

std::vector<ServerStatus> McpManager::status() const {
  std::vector<ServerStatus> out;
  for (const auto& e : impl_->entries_)
    out.push_back({e.spec.id, bridge::mcp::transport_name(e.spec.transport), e.server->state(), e.server->error(),
                   e.server->tools().size(), e.spec.required});
  return out;
}

asio::awaitable<void> McpManager::close() {
  auto impl = impl_;
  impl->closed_ = true;
  auto last = impl->leave();
  // All at once: N servers that do not leave on stdin EOF cost one grace period, not N.
  support::OneShotEvent all_closed(impl->deps_.executor);
  auto left = std::make_shared<std::size_t>(last.size());
  if (last.empty()) all_closed.set();
  for (auto& server : last)
    asio::co_spawn(impl->deps_.executor, server->close(), [&all_closed, left](std::exception_ptr) {
      if (--*left == 0) all_closed.set();
    });
  co_await all_closed.wait();
}

void McpManager::kill_now() {
  if (!impl_) return;
  impl_->closed_ = true;
  for (auto& server : impl_->leave()) server->kill_now();
}

}  // namespace runtime::mcp
