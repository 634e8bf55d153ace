#include "runtime/mcp/mcp_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace runtime::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using bridge::mcp::Client;
using bridge::mcp::McpError;
using bridge::mcp::ServerSpec;

const char* state_name(ServerState s) {
  switch (s) {
    case ServerState::NotStarted: return "not started";
    case ServerState::Starting: return "starting";
    case ServerState::Ready: return "ready";
    case ServerState::Failed: return "failed";
    case ServerState::Crashed: return "crashed";
    case ServerState::Closed: return "closed";
    case ServerState::NeedsSignIn: return "needs sign-in";
  }
  return "?";
}

McpServer::McpServer(Env env, ServerSpec spec) : env_(std::move(env)), spec_(std::move(spec)), started_(env_.executor) {}

std::shared_ptr<bridge::mcp::oauth::Authorizer> McpServer::authorizer() const {
  if (auto* h = std::get_if<bridge::mcp::HttpSpec>(&spec_.transport)) return h->auth;
  if (auto* s = std::get_if<bridge::mcp::SseSpec>(&spec_.transport)) return s->auth;
  return nullptr;
}

int McpServer::subscribe(EventFn fn) {
  subscribers_.emplace(next_token_, std::move(fn));
  return next_token_++;
}

void McpServer::unsubscribe(int token) { subscribers_.erase(token); }

int McpServer::watch_prompts(std::function<void()> fn) {
  prompt_watchers_.emplace(next_token_, std::move(fn));
  return next_token_++;
}

void McpServer::unwatch_prompts(int token) { prompt_watchers_.erase(token); }

void McpServer::prompts_changed() {
  auto watchers = prompt_watchers_;  // a watcher may unwatch from inside
  for (auto& [_, fn] : watchers)
    if (fn) fn();
}

bool McpServer::has_resources() const {
  return client_ && client_->connected() && client_->server_capabilities().contains("resources");
}

// prompts/list when the server has prompts; failures leave the list empty (logged).
asio::awaitable<void> McpServer::refresh_prompts() {
  auto self = shared_from_this();
  auto client = client_;
  if (!client || !client->server_capabilities().contains("prompts")) co_return;
  try {
    std::string method = "prompts/list", key = "prompts";
    prompts_ = co_await client->list_all(std::move(method), std::move(key), spec_.startup_timeout);
  } catch (const std::exception& e) {
    spdlog::warn("mcp {}: prompts/list failed: {}", spec_.id, e.what());
    prompts_.clear();
  }
  prompts_changed();
}

void McpServer::event(const std::string& detail) {
  spdlog::info("mcp {}: {}{}{}", spec_.id, state_ == ServerState::Ready ? "restarted" : state_name(state_),
               detail.empty() ? "" : ": ", detail);
  // A copy: a subscriber may close its session, and unsubscribe, from inside.
  auto subscribers = subscribers_;
  for (auto& [_, fn] : subscribers)
    if (fn) fn(spec_.id, state_, detail);
}

// Marks it Starting (so others wait instead of starting it twice); returns the generation.
int McpServer::begin_start() {
  state_ = ServerState::Starting;
  error_.clear();
  started_.reset();
  return ++generation_;
}

void McpServer::start_in_background() {
  if (state_ != ServerState::NotStarted && state_ != ServerState::Crashed) return;
  const bool restart = state_ == ServerState::Crashed;
  if (auto c = std::move(client_)) c->kill_now();
  const int gen = begin_start();
  asio::co_spawn(env_.executor, [self = shared_from_this(), gen, restart]() { return self->start(gen, restart); },
                 asio::detached);
}

// How the client of start `gen` talks back to this server: its end, the editor's elicitation,
// the prompt and resource lists changing. A client of an older start is ignored.
Client::Options McpServer::client_options(int gen) {
  Client::Options opts;
  opts.client_name = "openvaala";
  opts.client_version = OPENVAALA_VERSION;
  opts.log_id = spec_.id;
  opts.roots = [roots = env_.roots] {
    std::vector<bridge::mcp::Root> out;
    for (const auto& r : roots) out.push_back({bridge::mcp::file_uri(r.string()), r.filename().string()});
    return out;
  };
  std::weak_ptr<McpServer> weak = shared_from_this();
  opts.on_closed = [weak, gen](const std::string& reason) {
    auto me = weak.lock();
    if (!me || me->generation_ != gen || me->state_ == ServerState::Closed) return;
    const bool was_ready = me->state_ == ServerState::Ready;
    me->state_ = ServerState::Crashed;
    me->error_ = reason;
    // Closed while starting: start() reports it once, as a server that could not start.
    if (was_ready) me->event(reason + " (it will be restarted on next use)");
  };
  offer_elicitation(opts);
  opts.on_prompts_changed = [weak, gen] {
    auto me = weak.lock();
    if (!me || me->generation_ != gen || me->state_ != ServerState::Ready) return;
    asio::co_spawn(me->env_.executor, me->refresh_prompts(), asio::detached);
  };
  opts.on_resources_changed = [weak] {
    if (auto me = weak.lock()) me->resource_uris_.reset();
  };
  return opts;
}

// MCP elicitation, offered to the server only when the editor can answer (forms, URLs or both).
void McpServer::offer_elicitation(Client::Options& opts) {
  if (!env_.elicit_form && !env_.elicit_url) return;
  json::object cap;
  if (env_.elicit_form) cap["form"] = json::object{};
  if (env_.elicit_url) cap["url"] = json::object{};
  opts.elicitation_capability = std::move(cap);
  if (env_.elicit_url) opts.on_elicitation_complete = env_.elicitation_complete;
  // The latest running call's asker (stdio gives no way to tell which call asked).
  std::weak_ptr<McpServer> weak = shared_from_this();
  opts.elicit = [weak](json::object params) -> asio::awaitable<json::object> {
    auto me = weak.lock();
    if (!me || me->elicitors_.empty()) co_return json::object{{"action", "decline"}};
    auto ask = me->elicitors_.back().second;
    co_return co_await ask(std::move(params));
  };
}

// Connects and lists the tools; state ends Ready or Failed.
asio::awaitable<void> McpServer::start(int gen, bool restart) {
  auto self = shared_from_this();
  try {
    bridge::mcp::TransportDeps tdeps = env_.tunnel;
    tdeps.server_id_for_logs = spec_.id;
    auto transport = bridge::mcp::make_transport(env_.executor, spec_, tdeps);
    auto client = std::make_shared<Client>(env_.executor, std::move(transport), client_options(gen));
    client_ = client;
    co_await client->connect(spec_.startup_timeout);
    auto tools = co_await client->list_tools(spec_.startup_timeout);
    if (generation_ != gen || state_ == ServerState::Closed) co_return;
    tools_ = std::move(tools);
    resource_uris_.reset();
    state_ = ServerState::Ready;
    co_await refresh_prompts();
    spdlog::info("mcp {}: {} ({}), {} tools", spec_.id, restart ? "restarted" : "ready", client->describe(), tools_.size());
    if (restart) event("");
  } catch (const std::exception& e) {
    if (generation_ == gen && state_ != ServerState::Closed) {
      auto auth = authorizer();
      state_ = auth && auth->needs_sign_in() ? ServerState::NeedsSignIn : ServerState::Failed;
      error_ = e.what();
      if (client_) client_->kill_now();
      client_.reset();
      event(std::string(bridge::mcp::transport_name(spec_.transport)) + ": " + e.what());
    }
  }
  // Only the latest start ends the wait: a newer one is Starting (waiters would not park again).
  if (generation_ == gen) started_.set();
}

asio::awaitable<void> McpServer::ensure(support::CancelSource* cancel, bool retry_failed) {
  auto self = shared_from_this();
  needs_sign_in_check();
  if (state_ == ServerState::Ready && client_ && client_->connected()) {
    if (client_->tools_stale()) {
      try {
        tools_ = co_await client_->list_tools(spec_.startup_timeout, cancel);
      } catch (const McpError& e) {
        spdlog::warn("mcp {}: refreshing the tool list failed: {}", spec_.id, e.what());
      }
    }
    co_return;
  }
  if (state_ == ServerState::Closed) co_return;
  if (state_ == ServerState::NotStarted || state_ == ServerState::Crashed || state_ == ServerState::Ready ||
      (retry_failed && (state_ == ServerState::Failed || state_ == ServerState::NeedsSignIn))) {
    if (client_) {
      client_->kill_now();
      client_.reset();
    }
    const bool restart = state_ == ServerState::Crashed || state_ == ServerState::Ready;
    const int gen = begin_start();
    co_await start(gen, restart);
    co_return;
  }
  while (state_ == ServerState::Starting && !(cancel && cancel->cancelled())) co_await started_.wait(cancel);
}

asio::awaitable<std::shared_ptr<Client>> McpServer::ready_client(support::CancelSource* cancel) {
  auto self = shared_from_this();
  if (state_ != ServerState::Ready || !client_ || !client_->connected()) {
    co_await ensure(cancel, true);
    if (state_ != ServerState::Ready) throw McpError(McpError::Kind::Transport, error_.empty() ? "not running" : error_);
  }
  co_return client_;
}

asio::awaitable<json::object> McpServer::call(std::string tool, json::object args, support::CancelSource* cancel,
                                              Client::ProgressFn progress, ElicitFn elicit) {
  auto self = shared_from_this();
  auto client = co_await ready_client(cancel);
  struct Asking {  // the call's asker, for as long as it runs
    McpServer& server;
    int token = 0;
    ~Asking() {
      std::erase_if(server.elicitors_, [&](const auto& e) { return e.first == token; });
    }
  } asking{*this};
  if (elicit) {
    asking.token = next_token_++;
    elicitors_.emplace_back(asking.token, std::move(elicit));
  }
  try {
    co_return co_await client->call_tool(tool, std::move(args), spec_.tool_timeout, cancel, std::move(progress));
  } catch (const McpError&) {
    needs_sign_in_check();  // a revoked sign-in: the next turn asks again
    throw;
  }
}

void McpServer::needs_sign_in_check() {
  auto auth = authorizer();
  if (state_ != ServerState::Ready || !auth || !auth->needs_sign_in()) return;
  state_ = ServerState::NeedsSignIn;
  error_ = "the server needs sign-in again";
  if (auto c = std::move(client_)) c->kill_now();
}

asio::awaitable<json::object> McpServer::get_prompt(std::string name, json::object arguments,
                                                    support::CancelSource* cancel) {
  auto self = shared_from_this();
  auto client = co_await ready_client(cancel);
  std::string method = "prompts/get";
  json::object params{{"name", name}, {"arguments", std::move(arguments)}};
  auto result = co_await client->request(std::move(method), std::move(params), spec_.tool_timeout, cancel);
  if (!result.is_object()) throw McpError(McpError::Kind::Protocol, "prompts/get: the result is not an object");
  co_return std::move(result.as_object());
}

asio::awaitable<json::object> McpServer::list_resources(std::optional<std::string> cursor, support::CancelSource* cancel) {
  auto self = shared_from_this();
  auto client = co_await ready_client(cancel);
  json::object params;
  if (cursor) params["cursor"] = *cursor;
  std::string method = "resources/list";
  auto result = co_await client->request(std::move(method), std::move(params), spec_.tool_timeout, cancel);
  if (!result.is_object()) throw McpError(McpError::Kind::Protocol, "resources/list: the result is not an object");
  co_return std::move(result.as_object());
}

asio::awaitable<json::object> McpServer::read_resource(std::string uri, support::CancelSource* cancel) {
  auto self = shared_from_this();
  auto client = co_await ready_client(cancel);
  std::string method = "resources/read";
  json::object params{{"uri", uri}};
  auto result = co_await client->request(std::move(method), std::move(params), spec_.tool_timeout, cancel);
  if (!result.is_object()) throw McpError(McpError::Kind::Protocol, "resources/read: the result is not an object");
  co_return std::move(result.as_object());
}

asio::awaitable<bool> McpServer::lists_resource(std::string uri, support::CancelSource* cancel) {
  auto self = shared_from_this();
  if (!resource_uris_) {
    auto client = co_await ready_client(cancel);
    if (!client->server_capabilities().contains("resources")) co_return false;
    std::vector<std::string> uris;
    std::string method = "resources/list", key = "resources";
    auto listed = co_await client->list_all(std::move(method), std::move(key), spec_.startup_timeout, cancel);
    for (const auto& r : listed)
      if (auto* o = r.if_object())
        if (auto* u = o->if_contains("uri"); u && u->is_string()) uris.emplace_back(u->as_string());
    resource_uris_ = std::move(uris);
  }
  co_return std::find(resource_uris_->begin(), resource_uris_->end(), uri) != resource_uris_->end();
}

void McpServer::stop_state() {
  state_ = ServerState::Closed;
  ++generation_;
  started_.set();
}

asio::awaitable<void> McpServer::close() {
  auto self = shared_from_this();
  stop_state();
  if (auto c = std::move(client_)) co_await c->close();
}

void McpServer::kill_now() {
  stop_state();
  if (auto c = std::move(client_)) c->kill_now();
}

// ---- McpServerPool

namespace {
// Everything that makes two starts of a server the same process.
std::string sharing_key(const ServerSpec& spec, const McpServer::Env& env) {
  const auto& t = std::get<bridge::mcp::StdioSpec>(spec.transport);
  json::array args(t.args.begin(), t.args.end());
  json::array vars;
  for (const auto& [k, v] : t.env) vars.push_back(json::array{json::string(k), json::string(v)});
  json::array roots;
  for (const auto& r : env.roots) roots.push_back(json::string(r.string()));
  return json::serialize(json::object{{"id", spec.id}, {"executor", spec.executor}, {"command", t.command}, {"args", std::move(args)},
                                      {"env", std::move(vars)}, {"cwd", t.cwd}, {"roots", std::move(roots)}});
}
}  // namespace

bool McpServerPool::shareable(const ServerSpec& spec) {
  return std::holds_alternative<bridge::mcp::StdioSpec>(spec.transport);
}

std::shared_ptr<McpServer> McpServerPool::acquire(const ServerSpec& spec, const McpServer::Env& env) {
  auto& slot = servers_[sharing_key(spec, env)];
  if (!slot) slot = std::make_shared<McpServer>(env, spec);
  ++slot->users;
  return slot;
}

bool McpServerPool::release(const std::shared_ptr<McpServer>& server) {
  if (--server->users > 0) return false;
  std::erase_if(servers_, [&](const auto& entry) { return entry.second == server; });
  return true;
}

}  // namespace runtime::mcp
