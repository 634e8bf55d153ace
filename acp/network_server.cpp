#include "acp/network_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "acp/http_stream_transport.hpp"
#include "acp/message_reader.hpp"
#include "acp/network_auth.hpp"
#include "acp/websocket_transport.hpp"

namespace acp {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace websocket = boost::beast::websocket;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kRequestTimeout = std::chrono::seconds(30);
constexpr std::string_view kEndpoint = "/acp";

asio::ip::address listen_ip(const std::string& host) {
  if (host == "localhost") return asio::ip::make_address("127.0.0.1");
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec) throw std::runtime_error("--listen: '" + host + "' is not an IP address (use 127.0.0.1, ::1, 0.0.0.0 or an interface's address)");
  return address;
}

http::response<http::string_body> plain_response(const http::request<http::string_body>& req, http::status status,
                                                 std::string body) {
  http::response<http::string_body> res{status, req.version()};
  res.set(http::field::content_type, "text/plain; charset=utf-8");
  if (status == http::status::unauthorized) res.set(http::field::www_authenticate, "Bearer");
  res.keep_alive(false);
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

}  // namespace

struct NetworkServer::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::any_io_executor ex, NetworkServerOptions opts, OnConnection cb)
      : executor(ex), options(std::move(opts)), on_connection(std::move(cb)), acceptor(ex), http_connections(ex, on_connection) {}

  asio::awaitable<void> accept_loop() {
    auto self = shared_from_this();
    while (!stopped) {
      auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
      if (stopped) break;
      if (ec) {
        spdlog::warn("accept failed: {}", ec.message());
        continue;
      }
      asio::co_spawn(executor, serve(std::move(socket)), asio::detached);
    }
  }

  // The requests of a TCP connection, until one is refused, upgraded to a WebSocket ACP
  // connection, or turned into an event stream (HttpConnections), or the client goes quiet.
  asio::awaitable<void> serve(tcp::socket socket) {
    auto self = shared_from_this();
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(kMaxMessageBytes);
      stream.expires_after(kRequestTimeout);
      auto [ec, n] = co_await http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      auto req = parser.release();
      if (auto refusal = refuse(req)) {
        co_await http::async_write(stream, *refusal, asio::as_tuple(asio::use_awaitable));
        break;
      }
      stream.expires_never();
      if (websocket::is_upgrade(req)) {
        co_await upgrade(std::move(stream), std::move(req));
        co_return;
      }
      if (!co_await http_connections.handle(stream, std::move(req)) || stopped) break;
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  asio::awaitable<void> upgrade(beast::tcp_stream stream, http::request<http::string_body> req) {
    WebSocketStream ws(std::move(stream));
    ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    auto [ec] = co_await ws.async_accept(req, asio::as_tuple(asio::use_awaitable));
    if (ec) {
      spdlog::info("WebSocket upgrade failed: {}", ec.message());
      co_return;
    }
    spdlog::info("ACP WebSocket connection from {}", beast::get_lowest_layer(ws).socket().remote_endpoint(ec).address().to_string());
    on_connection(make_websocket_transport(std::move(ws)));
  }

  // The answer refusing `req`, or nullopt when it may go on. The token is checked first, so
  // that without it nothing about the server is learnt.
  std::optional<http::response<http::string_body>> refuse(const http::request<http::string_body>& req) {
    if (!bearer_matches(req[http::field::authorization], options.token))
      return plain_response(req, http::status::unauthorized, "401 Unauthorized: missing or wrong bearer token\n");
    if (path_of(req.target()) != kEndpoint)
      return plain_response(req, http::status::not_found, "404 Not Found: ACP is served at /acp\n");
    if (req.count(http::field::origin) != 0)
      return plain_response(req, http::status::forbidden, "403 Forbidden: browser origins are not allowed\n");
    return std::nullopt;
  }

  asio::any_io_executor executor;
  NetworkServerOptions options;
  OnConnection on_connection;
  tcp::acceptor acceptor;
  HttpConnections http_connections;
  bool stopped = false;
};

NetworkServer::NetworkServer(asio::any_io_executor executor, NetworkServerOptions options, OnConnection on_connection)
    : impl_(std::make_shared<Impl>(executor, std::move(options), std::move(on_connection))) {
  const auto ip = listen_ip(impl_->options.host);
  if (!ip.is_loopback() && impl_->options.token.empty())
    throw std::runtime_error("--listen " + impl_->options.host +
                             " is reachable from other machines: give a --token-file (a file of mode 0600 holding a "
                             "secret) or listen on 127.0.0.1 and reach it through ssh -L");
  const tcp::endpoint endpoint(ip, impl_->options.port);
  boost::system::error_code ec;
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("--listen: cannot listen on " + impl_->options.host + ":" +
                                   std::to_string(impl_->options.port) + ": " + ec.message());
}

NetworkServer::~NetworkServer() { stop(); }

unsigned short NetworkServer::port() const { return impl_->acceptor.local_endpoint().port(); }

void NetworkServer::start() { asio::co_spawn(impl_->executor, impl_->accept_loop(), asio::detached); }

void NetworkServer::stop() {
  impl_->stopped = true;
  impl_->http_connections.close_all();
  boost::system::error_code ignored;
  impl_->acceptor.close(ignored);
}

}  // namespace acp
