#include "acp/network_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <spdlog/spdlog.h>

#include <optional>
#include <stdexcept>

#include "acp/http_stream_transport.hpp"
#include "acp/message_reader.hpp"
#include "acp/network_auth.hpp"
#include "acp/network_limits.hpp"
#include "acp/network_streams.hpp"
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

template <class Request>
http::response<http::string_body> plain_response(const Request& req, http::status status, std::string body) {
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
      : executor(ex),
        options(std::move(opts)),
        on_connection(std::move(cb)),
        acceptor(ex),
        slots(std::make_shared<ConnectionSlots>(options.max_connections)),
        http_connections(
            ex, [this](std::unique_ptr<Transport> t, ConnectionSlot slot) { admit(std::move(t), std::move(slot)); }, slots,
            options.idle_timeout) {}

  // A new ACP connection, holding its slot, its sessions limited.
  void admit(std::unique_ptr<Transport> transport, ConnectionSlot slot) {
    on_connection(make_limited_transport(std::move(transport), std::move(slot), options.max_sessions));
  }

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

  // A TCP connection: with TLS, the handshake first (a client speaking plain HTTP fails it and
  // is dropped); then its requests.
  asio::awaitable<void> serve(tcp::socket socket) {
    auto self = shared_from_this();
    PlainStream plain(std::move(socket));
    if (!tls) {
      co_await serve_requests(std::move(plain));
      co_return;
    }
    TlsStream secure(std::move(plain), *tls);
    beast::get_lowest_layer(secure).expires_after(kRequestTimeout);
    auto [ec] = co_await secure.async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
    if (ec) {
      spdlog::info("TLS handshake failed (a plain-text client on the TLS port?): {}", ec.message());
      beast::error_code ignored;
      beast::get_lowest_layer(secure).socket().shutdown(tcp::socket::shutdown_both, ignored);
      co_return;
    }
    co_await serve_requests(std::move(secure));
  }

  // The requests of a TCP connection, until one is refused, upgraded to a WebSocket ACP
  // connection, or turned into an event stream (HttpConnections), or the client goes quiet.
  template <class Stream>
  asio::awaitable<void> serve_requests(Stream stream) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(kMaxMessageBytes);
      beast::get_lowest_layer(stream).expires_after(kRequestTimeout);
      auto [ec, n] = co_await http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
      if (ec == http::error::body_limit) {  // told by Content-Length before the body is read
        auto answer = refuse(parser.get());
        if (!answer)
          answer = plain_response(parser.get(), http::status::payload_too_large,
                                  "413 Payload Too Large: an ACP message may have at most " +
                                      std::to_string(kMaxMessageBytes) + " bytes\n");
        co_await http::async_write(stream, *answer, asio::as_tuple(asio::use_awaitable));
        break;
      }
      if (ec) co_return;
      auto req = parser.release();
      if (auto refusal = refuse(req)) {
        co_await http::async_write(stream, *refusal, asio::as_tuple(asio::use_awaitable));
        break;
      }
      beast::get_lowest_layer(stream).expires_never();
      if (websocket::is_upgrade(req)) {
        co_await upgrade(std::move(stream), std::move(req));
        co_return;
      }
      if (!co_await http_connections.handle(stream, std::move(req)) || stopped) break;
    }
    beast::error_code ignored;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  template <class Stream>
  asio::awaitable<void> upgrade(Stream stream, http::request<http::string_body> req) {
    auto slot = slots->take();
    if (!slot) {
      auto full = plain_response(req, http::status::service_unavailable, slots->refusal());
      co_await http::async_write(stream, full, asio::as_tuple(asio::use_awaitable));
      co_return;
    }
    websocket::stream<Stream> ws(std::move(stream));
    ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    // A browser offers "acp" beside "acp.bearer.<token>" and needs one offered protocol back:
    // "acp", never the one carrying the token.
    if (offers_subprotocol(req[http::field::sec_websocket_protocol], kAcpSubprotocol))
      ws.set_option(websocket::stream_base::decorator(
          [](websocket::response_type& res) { res.set(http::field::sec_websocket_protocol, kAcpSubprotocol); }));
    auto [ec] = co_await ws.async_accept(req, asio::as_tuple(asio::use_awaitable));
    if (ec) {
      spdlog::info("WebSocket upgrade failed: {}", ec.message());
      co_return;
    }
    spdlog::info("ACP WebSocket connection from {}", beast::get_lowest_layer(ws).socket().remote_endpoint(ec).address().to_string());
    admit(make_websocket_transport(std::move(ws)), std::move(*slot));
  }

  // The answer refusing `req`, or nullopt when it may go on. The token is checked first, so
  // that without it nothing about the server is learnt.
  std::optional<http::response<http::string_body>> refuse(const http::request<http::string_body>& req) {
    const bool authorized = bearer_matches(req[http::field::authorization], options.token) ||
                            (websocket::is_upgrade(req) &&
                             subprotocol_bearer_matches(req[http::field::sec_websocket_protocol], options.token));
    if (!authorized)
      return plain_response(req, http::status::unauthorized, "401 Unauthorized: missing or wrong bearer token\n");
    if (path_of(req.target()) != kEndpoint)
      return plain_response(req, http::status::not_found, "404 Not Found: ACP is served at /acp\n");
    if (req.count(http::field::origin) != 0 && !origin_allowed(req[http::field::origin], options.allowed_origins))
      return plain_response(req, http::status::forbidden,
                            "403 Forbidden: this browser origin is not allowed (see --allow-origin)\n");
    return std::nullopt;
  }

  asio::any_io_executor executor;
  NetworkServerOptions options;
  OnConnection on_connection;
  tcp::acceptor acceptor;
  std::optional<asio::ssl::context> tls;
  std::shared_ptr<ConnectionSlots> slots;
  HttpConnections http_connections;
  bool stopped = false;
};

NetworkServer::NetworkServer(asio::any_io_executor executor, NetworkServerOptions options, OnConnection on_connection)
    : impl_(std::make_shared<Impl>(executor, std::move(options), std::move(on_connection))) {
  const auto ip = listen_ip(impl_->options.host);
  if (impl_->options.tls_cert.empty() != impl_->options.tls_key.empty())
    throw std::runtime_error("--tls-cert and --tls-key go together: give both (https/wss) or neither");
  if (!impl_->options.tls_cert.empty())
    impl_->tls.emplace(make_tls_context(impl_->options.tls_cert, impl_->options.tls_key));
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

bool NetworkServer::tls() const { return impl_->tls.has_value(); }

void NetworkServer::start() { asio::co_spawn(impl_->executor, impl_->accept_loop(), asio::detached); }

void NetworkServer::stop() {
  impl_->stopped = true;
  impl_->http_connections.close_all();
  boost::system::error_code ignored;
  impl_->acceptor.close(ignored);
}

}  // namespace acp
