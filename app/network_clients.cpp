#include "app/network_clients.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

namespace app {

namespace asio = boost::asio;

namespace {
// After a dropped client's agent shut down: time for what the shutdown started (MCP servers
// killed, sessions' set-ups told to stop) to unwind before the objects they point at go.
constexpr auto kFreeGrace = std::chrono::seconds(2);
constexpr auto kPollInterval = std::chrono::milliseconds(10);
}  // namespace

void NetworkClients::serve(std::unique_ptr<acp::Transport> transport) {
  auto client = clients_.emplace(clients_.end());
  client->transport = std::move(transport);
  client->conn = std::make_unique<acp::Connection>(ioc_.get_executor(), *client->transport);
  client->agent = std::make_unique<runtime::server::AcpAgent>(*client->conn, pool_);
  client->transport->start({
      [client](acp::IncomingMessage&& message) { client->conn->handle_message(std::move(message)); },
      [this, client] { disconnected(client); },
  });
}

// Its turns run on (detach, not close: a reconnecting editor loads them); it is retired once
// none of its requests is in flight.
void NetworkClients::disconnected(Handle client) {
  spdlog::info("ACP network client disconnected ({} requests still running)", client->conn->requests_in_flight());
  client->gone = true;
  client->conn->detach();
  client->agent->client_gone();
  client->conn->on_idle([this, client] { retire(client); });
}

void NetworkClients::retire(Handle client) {
  if (client->retiring) return;
  client->retiring = true;
  client->agent->shutdown();
  asio::co_spawn(ioc_, free_when_settled(client), asio::detached);
}

asio::awaitable<void> NetworkClients::free_when_settled(Handle client) {
  co_await client->agent->settled();
  asio::steady_timer grace(ioc_, kFreeGrace);
  co_await grace.async_wait(asio::as_tuple(asio::use_awaitable));
  clients_.erase(client);
  spdlog::info("ACP network client freed ({} clients kept)", clients_.size());
}

void NetworkClients::reload_config() {
  for (auto& c : clients_)
    if (!c.gone) c.agent->reload_config();
}

void NetworkClients::stop(std::chrono::steady_clock::duration deadline, std::function<void()> done) {
  for (auto& c : clients_) {
    c.agent->prepare_exit();
    c.conn->close();
  }
  const auto until = std::chrono::steady_clock::now() + deadline;
  asio::co_spawn(
      ioc_,
      [this, until, done = std::move(done)]() -> asio::awaitable<void> {
        co_await wait_for_requests(until);
        done();
      },
      asio::detached);
}

// Cancelled turns end on the io thread (their ends journaled): polled, bounded by `until`.
asio::awaitable<void> NetworkClients::wait_for_requests(std::chrono::steady_clock::time_point until) {
  auto running = [this] {
    for (const auto& c : clients_)
      if (c.conn->requests_in_flight() != 0) return true;
    return false;
  };
  asio::steady_timer tick(ioc_);
  while (running() && std::chrono::steady_clock::now() < until) {
    tick.expires_after(kPollInterval);
    co_await tick.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

void NetworkClients::flush_and_stop() {
  for (auto& c : clients_) c.transport->flush_and_stop();
}

}  // namespace app
