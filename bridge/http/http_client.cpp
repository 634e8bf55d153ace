#include "bridge/http/http_client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>
#include <spdlog/spdlog.h>
#include <strings.h>

namespace bridge::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

std::string HttpResponseHead::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
  return {};
}

namespace {

HttpFailure classify(const boost::system::error_code& ec, bool cancelled, std::string_view stage) {
  if (cancelled) return {FailureKind::Cancelled, "cancelled"};
  if (ec == beast::error::timeout) return {FailureKind::Timeout, std::string(stage) + ": timed out"};
  if (ec == asio::error::connection_reset || ec == asio::error::broken_pipe || ec == bhttp::error::end_of_stream ||
      ec == asio::error::eof || ec == bhttp::error::partial_message)
    return {FailureKind::Reset, std::string(stage) + ": connection closed (" + ec.message() + ")"};
  if (ec.category() == asio::error::get_ssl_category())
    return {FailureKind::Tls, std::string(stage) + ": TLS error (" + ec.message() + ")"};
  if (stage == "connect") return {FailureKind::Connect, "connect: " + ec.message()};
  return {FailureKind::Protocol, std::string(stage) + ": " + ec.message()};
}

asio::ssl::context& tls_context() {
  static asio::ssl::context ctx = [] {
    asio::ssl::context c(asio::ssl::context::tls_client);
    c.set_default_verify_paths();
    c.set_verify_mode(asio::ssl::verify_peer);
    return c;
  }();
  return ctx;
}

// Reads the body into `on_data` until the response is complete. The body is parsed straight
// from the buffer, and the socket read only when the parser needs more: beast's async_read_some
// completes from buffered bytes through a post, which for a chunked model stream (a chunk per
// SSE event) was a scheduler pass and an epoll_wait per event.
template <class Stream>
asio::awaitable<std::optional<HttpFailure>> read_body(Stream& stream, beast::tcp_stream& lowest, beast::flat_buffer& buffer,
                                                      bhttp::response_parser<bhttp::buffer_body>& parser,
                                                      const StreamOptions& options,
                                                      const std::function<void(std::string_view)>& on_data,
                                                      support::CancelSource* cancel) {
  auto cancelled = [&] { return cancel && cancel->cancelled(); };
  buffer.reserve(64 * 1024);
  std::array<char, 64 * 1024> chunk;
  while (!parser.is_done()) {
    if (buffer.size() > 0) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      boost::system::error_code pec;
      const std::size_t used = parser.put(buffer.data(), pec);
      buffer.consume(used);
      if (pec == bhttp::error::need_buffer) pec = {};  // the chunk is full: hand it on, parse on
      const std::size_t got = chunk.size() - parser.get().body().size;
      if (got) on_data(std::string_view(chunk.data(), got));
      if (cancelled()) co_return HttpFailure{FailureKind::Cancelled, "cancelled"};
      if (pec && pec != bhttp::error::need_more) co_return classify(pec, false, "reading the response");
      if (!pec && (used > 0 || got > 0)) continue;
    }
    if (parser.is_done()) break;
    if (options.before_read) {
      auto ready = options.before_read();  // named: no temporaries inside co_await (GCC 12)
      co_await std::move(ready);
      if (cancelled()) co_return HttpFailure{FailureKind::Cancelled, "cancelled"};
    }
    lowest.expires_after(options.idle_timeout);
    auto [rec, rn] = co_await stream.async_read_some(buffer.prepare(64 * 1024), kTuple);
    buffer.commit(rn);
    if (rec == asio::error::eof && rn == 0) {
      // The end of a response that ends with the connection (no length, not chunked), or a cut.
      boost::system::error_code eec;
      parser.put_eof(eec);
      if (eec) co_return classify(eec, cancelled(), "reading the response");
      continue;
    }
    if (rec) co_return classify(rec, cancelled(), "reading the response");
    if (cancelled()) co_return HttpFailure{FailureKind::Cancelled, "cancelled"};
  }
  co_return std::nullopt;
}

// Sends the request over a connected stream, hands the head to `on_head`, then the body.
template <class Stream>
asio::awaitable<std::optional<HttpFailure>> exchange(Stream& stream, beast::tcp_stream& lowest,
                                                     bhttp::request<bhttp::string_body>& req,
                                                     const StreamOptions& options,
                                                     const std::function<void(const HttpResponseHead&)>& on_head,
                                                     const std::function<void(std::string_view)>& on_data,
                                                     support::CancelSource* cancel) {
  auto cancelled = [&] { return cancel && cancel->cancelled(); };
  lowest.expires_after(options.idle_timeout);
  auto [wec, wn] = co_await bhttp::async_write(stream, req, kTuple);
  if (wec) co_return classify(wec, cancelled(), "sending the request");

  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(boost::none);
  auto [hec, hn] = co_await bhttp::async_read_header(stream, buffer, parser, kTuple);
  if (hec) co_return classify(hec, cancelled(), "reading the response");
  HttpResponseHead head;
  head.status = static_cast<int>(parser.get().result_int());
  for (const auto& f : parser.get()) head.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  on_head(head);
  co_return co_await read_body(stream, lowest, buffer, parser, options, on_data, cancel);
}

// Where a request goes: from its URL, and the address dialled (its connect_to, else the URL's).
struct Target {
  bool tls = false;
  std::string host, port, resource;
  std::string dial_host, dial_port;
  bool has_port = false;
};

std::optional<HttpFailure> parse_target(const HttpRequest& request, Target& t) {
  auto parsed = boost::urls::parse_uri(request.url);
  if (!parsed) return HttpFailure{FailureKind::BadUrl, "not a valid URL: " + request.url};
  const std::string scheme(parsed->scheme());
  if (scheme != "http" && scheme != "https")
    return HttpFailure{FailureKind::BadUrl, "unsupported URL scheme '" + scheme + "' in " + request.url};
  t.tls = scheme == "https";
  t.host = std::string(parsed->host_address());
  t.has_port = parsed->has_port();
  t.port = t.has_port ? std::string(parsed->port()) : (t.tls ? "443" : "80");
  t.resource = std::string(parsed->encoded_resource());
  if (t.resource.empty()) t.resource = "/";
  t.dial_host = t.host;
  t.dial_port = t.port;
  if (!request.connect_to.empty()) {
    const auto colon = request.connect_to.rfind(':');
    if (colon == std::string::npos) return HttpFailure{FailureKind::BadUrl, "not host:port: " + request.connect_to};
    t.dial_host = request.connect_to.substr(0, colon);
    t.dial_port = request.connect_to.substr(colon + 1);
  }
  return std::nullopt;
}

bhttp::request<bhttp::string_body> beast_request(const HttpRequest& request, const Target& t) {
  bhttp::request<bhttp::string_body> req;
  req.method_string(request.method);
  req.target(t.resource);
  req.version(11);
  req.set(bhttp::field::host, t.has_port ? t.host + ":" + t.port : t.host);
  req.set(bhttp::field::user_agent, "openvaala/" OPENVAALA_VERSION);
  for (const auto& [k, v] : request.headers) req.set(k, v);
  req.body() = request.body;
  req.prepare_payload();
  return req;
}

struct Exchange {
  bhttp::request<bhttp::string_body>& req;
  const StreamOptions& options;
  const std::function<void(const HttpResponseHead&)>& on_head;
  const std::function<void(std::string_view)>& on_data;
  support::CancelSource* cancel;
  bool cancelled() const { return cancel && cancel->cancelled(); }
};

asio::awaitable<std::optional<HttpFailure>> exchange_plain(const tcp::resolver::results_type& endpoints, Exchange x) {
  auto executor = co_await asio::this_coro::executor;
  beast::tcp_stream stream(executor);
  support::CancelSource::Registration reg;
  if (x.cancel) reg = x.cancel->on_cancel([&stream] { stream.socket().close(); });
  stream.expires_after(x.options.connect_timeout);
  auto [cec, ep] = co_await stream.async_connect(endpoints, kTuple);
  if (cec) co_return classify(cec, x.cancelled(), "connect");
  auto result = co_await exchange(stream, stream, x.req, x.options, x.on_head, x.on_data, x.cancel);
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  co_return result;
}

asio::awaitable<std::optional<HttpFailure>> exchange_tls(const tcp::resolver::results_type& endpoints, const std::string& host,
                                                         Exchange x) {
  auto executor = co_await asio::this_coro::executor;
  beast::ssl_stream<beast::tcp_stream> stream(executor, tls_context());
  support::CancelSource::Registration reg;
  if (x.cancel) reg = x.cancel->on_cancel([&stream] { beast::get_lowest_layer(stream).socket().close(); });
  if (!SSL_set_tlsext_host_name(stream.native_handle(), host.c_str()))
    co_return HttpFailure{FailureKind::Tls, "cannot set TLS server name for " + host};
  stream.set_verify_callback(asio::ssl::host_name_verification(host));
  auto& lowest = beast::get_lowest_layer(stream);
  lowest.expires_after(x.options.connect_timeout);
  auto [cec, ep] = co_await lowest.async_connect(endpoints, kTuple);
  if (cec) co_return classify(cec, x.cancelled(), "connect");
  auto [hec] = co_await stream.async_handshake(asio::ssl::stream_base::client, kTuple);
  if (hec) co_return classify(hec, x.cancelled(), "TLS handshake with " + host);
  auto result = co_await exchange(stream, lowest, x.req, x.options, x.on_head, x.on_data, x.cancel);
  boost::system::error_code ignored;
  lowest.socket().shutdown(tcp::socket::shutdown_both, ignored);
  co_return result;
}

}  // namespace

asio::awaitable<std::optional<HttpFailure>> stream_request(const HttpRequest& request, const StreamOptions& options,
                                                           std::function<void(const HttpResponseHead&)> on_head,
                                                           std::function<void(std::string_view)> on_data,
                                                           support::CancelSource* cancel) {
  Target target;
  if (auto bad = parse_target(request, target)) co_return bad;
  bhttp::request<bhttp::string_body> req = beast_request(request, target);

  auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  auto [rec, endpoints] = co_await resolver.async_resolve(target.dial_host, target.dial_port, kTuple);
  if (rec) co_return HttpFailure{FailureKind::Connect, "cannot resolve " + target.dial_host + ": " + rec.message()};
  const Exchange x{req, options, on_head, on_data, cancel};
  if (!target.tls) co_return co_await exchange_plain(endpoints, x);
  co_return co_await exchange_tls(endpoints, target.host, x);
}

}  // namespace bridge::http
