#include "bridge/mcp/oauth_redirect.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <exception>
#include <memory>
#include <optional>

#include "bridge/mcp/errors.hpp"
#include "bridge/mcp/oauth.hpp"

namespace bridge::mcp::oauth {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

RedirectListener::RedirectListener(asio::any_io_executor ex, int port) : acceptor_(ex) {
  boost::system::error_code ec;
  tcp::endpoint ep(asio::ip::make_address_v4("127.0.0.1"), static_cast<unsigned short>(port));
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(16, ec);
  if (ec)
    throw OAuthError("cannot listen on 127.0.0.1:" + std::to_string(port) + " for the sign-in redirect: " + ec.message());
}

std::string RedirectListener::redirect_uri() const {
  return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) + "/callback";
}

namespace {

std::string page(const std::string& title, const std::string& text) {
  return "<!doctype html><html><head><meta charset=\"utf-8\"><title>" + title + "</title></head><body><h1>" + title +
         "</h1><p>" + text + "</p></body></html>\n";
}

asio::awaitable<void> answer(beast::tcp_stream& stream, bhttp::status status, const std::string& body) {
  bhttp::response<bhttp::string_body> res{status, 11};
  res.set(bhttp::field::content_type, "text/html; charset=utf-8");
  res.set(bhttp::field::cache_control, "no-store");
  res.set(bhttp::field::connection, "close");
  res.body() = body;
  res.prepare_payload();
  co_await bhttp::async_write(stream, res, kTuple);
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

}  // namespace

namespace {

// What the connections of one wait share with it: the first redirect that ends the sign-in.
struct RedirectWait {
  std::string state, server_id;
  tcp::acceptor* acceptor = nullptr;  // null once wait_for_code has returned
  std::optional<std::string> code;
  std::exception_ptr error;
  int connections = 0;

  bool done() const { return code || error; }
  // Wakes wait_for_code, which waits in an accept.
  void finish() {
    boost::system::error_code ignored;
    if (acceptor) acceptor->cancel(ignored);
  }
};

// A browser may open idle connections before the redirect (preconnects), and any local process
// can connect: each gets its own deadline, and none holds up the others.
constexpr auto kConnectionDeadline = std::chrono::seconds(10);
constexpr int kMaxConnections = 64;

// One connection: a request read (within its deadline) and answered. A redirect that carries the
// sign-in's state ends the wait with its code or its error; any other request gets 404/400.
asio::awaitable<void> serve_redirect(std::shared_ptr<RedirectWait> wait, tcp::socket socket) {
  struct Count {
    RedirectWait& w;
    ~Count() { --w.connections; }
  } count{*wait};
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(kConnectionDeadline);
  beast::flat_buffer buf;
  bhttp::request<bhttp::string_body> req;
  auto [rec, n] = co_await bhttp::async_read(stream, buf, req, kTuple);
  if (rec || wait->done()) co_return;
  std::string target(req.target());
  if (target.rfind("/callback", 0) != 0 || (target.size() > 9 && target[9] != '?')) {
    co_await answer(stream, bhttp::status::not_found, page("Not found", "This address only takes the sign-in redirect."));
    co_return;
  }
  std::string code, got_state, error, error_description;
  for (auto& [k, v] : query_params(target)) {
    if (k == "code") code = v;
    else if (k == "state") got_state = v;
    else if (k == "error") error = v;
    else if (k == "error_description") error_description = v;
  }
  // A forged or stale redirect (another sign-in's, or none at all) must not end this one.
  if (got_state != wait->state) {
    co_await answer(stream, bhttp::status::bad_request,
                    page("Sign-in link expired", "This redirect does not belong to the sign-in in progress."));
    co_return;
  }
  if (!error.empty()) {
    std::string why = error + (error_description.empty() ? "" : " (" + error_description + ")");
    wait->error = std::make_exception_ptr(OAuthError("the authorization server answered: " + why, error));
    wait->finish();
    co_await answer(stream, bhttp::status::ok,
                    page("Sign-in failed", "The MCP server " + escape_html(wait->server_id) + " refused: " + escape_html(why)));
    co_return;
  }
  if (code.empty()) {
    co_await answer(stream, bhttp::status::bad_request, page("Sign-in failed", "The redirect carries no code."));
    co_return;
  }
  if (wait->done()) co_return;  // another connection ended the sign-in meanwhile
  wait->code = std::move(code);
  wait->finish();
  co_await answer(stream, bhttp::status::ok,
                  page("Signed in", "OpenVaala is signed in to the MCP server " + escape_html(wait->server_id) +
                                        ". You can close this tab."));
}

}  // namespace

asio::awaitable<std::string> RedirectListener::wait_for_code(const std::string& state, support::CancelSource* cancel,
                                                             std::chrono::seconds timeout, const std::string& server_id) {
  bool timed_out = false;
  bool cancelled = false;
  asio::steady_timer timer(acceptor_.get_executor(), timeout);
  timer.async_wait([&](boost::system::error_code ec) {
    if (ec) return;
    timed_out = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
  support::CancelSource::Registration reg;
  if (cancel)
    reg = cancel->on_cancel([&] {
      cancelled = true;
      boost::system::error_code ignored;
      acceptor_.close(ignored);
    });
  auto wait = std::make_shared<RedirectWait>();
  wait->state = state;
  wait->server_id = server_id;
  wait->acceptor = &acceptor_;
  struct Stop {  // however the wait ends: the timer stops, and no connection reaches the acceptor
    asio::steady_timer& t;
    RedirectWait& w;
    ~Stop() {
      t.cancel();
      w.acceptor = nullptr;
    }
  } stop{timer, *wait};
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(kTuple);
    if (wait->error) std::rethrow_exception(wait->error);
    if (wait->code) co_return *wait->code;
    if (ec) {
      if (timed_out)
        throw McpError(McpError::Kind::Timeout, "no sign-in within " + std::to_string(timeout.count()) + " s");
      if (cancelled || (cancel && cancel->cancelled())) throw McpError(McpError::Kind::Cancelled, "the sign-in was cancelled");
      throw OAuthError("the sign-in redirect listener failed: " + ec.message());
    }
    if (wait->connections >= kMaxConnections) continue;  // the socket closes here; the others go on
    ++wait->connections;
    asio::co_spawn(acceptor_.get_executor(), serve_redirect(wait, std::move(socket)), asio::detached);
  }
}

}  // namespace bridge::mcp::oauth
