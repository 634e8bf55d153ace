#pragma once
// Internal to the two HTTP transports of MCP (http_transport.cpp, sse_transport.cpp): what they
// share (handlers, cancelling every stream on close, posting deliveries, SSE feeding).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>

#include <cctype>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bridge/http/http_client.hpp"
#include "bridge/http/sse_decoder.hpp"
#include "bridge/mcp/errors.hpp"
#include "bridge/mcp/oauth_flow.hpp"
#include "bridge/mcp/transport.hpp"
#include "support/cancellation.hpp"

namespace bridge::mcp::http_detail {

namespace asio = boost::asio;
namespace json = boost::json;
namespace http = bridge::http;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

using HeadFn = std::function<void(const http::HttpResponseHead&)>;
using DataFn = std::function<void(std::string_view)>;
constexpr std::size_t kMaxBody = 64 * 1024 * 1024;

inline bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return false;
  return true;
}

inline std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (s.size() > 300) s = s.substr(0, 300) + "…";
  return s;
}

// Shared bits: handlers, cancellation of every stream on close, posting deliveries.
class HttpBase : public Transport {
 protected:
  HttpBase(asio::any_io_executor ex, std::string url, std::vector<std::pair<std::string, std::string>> headers,
           std::string log_id, std::shared_ptr<oauth::Authorizer> auth, std::string connect_to)
      : ex_(std::move(ex)),
        url_(std::move(url)),
        headers_(std::move(headers)),
        log_id_(std::move(log_id)),
        auth_(std::move(auth)),
        connect_to_(std::move(connect_to)) {}

  // Every request of the transport: to `url`, dialling the forwarded port when there is one.
  http::HttpRequest make_request(std::string method, std::string url, std::vector<std::pair<std::string, std::string>> headers,
                            std::string body) const {
    http::HttpRequest r{std::move(method), std::move(url), std::move(headers), std::move(body)};
    r.connect_to = connect_to_;
    return r;
  }

  // Adds the OAuth bearer token (when there is one) to `headers`; returns the token sent.
  asio::awaitable<std::optional<std::string>> authorize(std::vector<std::pair<std::string, std::string>>& headers) {
    if (!auth_) co_return std::nullopt;
    auto token = co_await auth_->bearer();
    if (token) headers.emplace_back("Authorization", "Bearer " + *token);
    co_return token;
  }
  // After an HTTP 401: true when the request may be sent again with a new token.
  asio::awaitable<bool> reauthorize(const http::HttpResponseHead& head, const std::optional<std::string>& sent) {
    if (!auth_ || head.status != 401 || stopped_) co_return false;
    co_return co_await auth_->unauthorized(head.header("www-authenticate"), sent);
  }
  std::string unauthorized_text() const {
    return auth_ && auth_->needs_sign_in() ? " (the server needs sign-in: run `openvaala mcp login " + auth_->server_id() + "`)"
                                            : std::string();
  }

  // The start of both transports: the URL must be http(s); then the handlers are taken.
  void take_handlers(Handlers handlers) {
    auto parsed = boost::urls::parse_uri(url_);
    if (!parsed || (parsed->scheme() != "http" && parsed->scheme() != "https"))
      throw McpError(McpError::Kind::Transport, "not an http(s) URL: " + url_);
    handlers_ = std::move(handlers);
  }
  void deliver(json::object msg) {
    if (stopped_) return;
    if (auto h = handlers_.on_message) h(std::move(msg));
  }
  void deliver_later(json::object msg) {
    auto self = shared_from_this();
    asio::post(ex_, [this, self, msg = std::move(msg)]() mutable { deliver(std::move(msg)); });
  }
  void closed(std::string reason) {
    if (stopped_) return;
    stopped_ = true;
    auto handlers = std::move(handlers_);
    handlers_ = {};
    cancel_all();
    if (handlers.on_closed) handlers.on_closed(std::move(reason));
  }
  std::shared_ptr<support::CancelSource> track(std::uint64_t& key) {
    key = next_key_++;
    auto c = std::make_shared<support::CancelSource>();
    active_.emplace(key, c);
    return c;
  }
  void untrack(std::uint64_t key) { active_.erase(key); }
  void cancel_all() {
    auto all = std::move(active_);
    active_.clear();
    for (auto& [_, c] : all) c->cancel();
  }
  void feed_events(http::SseDecoder& dec, std::string_view chunk, const std::function<void(http::SseEvent&)>& on_event) {
    std::vector<http::SseEvent> events;
    dec.feed(chunk, events);
    for (auto& e : events) on_event(e);
  }

  asio::any_io_executor ex_;
  std::string url_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::string log_id_;
  std::shared_ptr<oauth::Authorizer> auth_;
  std::string connect_to_;  // HttpSpec::connect_to
  Handlers handlers_;
  bool stopped_ = false;
  std::uint64_t next_key_ = 1;
  std::map<std::uint64_t, std::shared_ptr<support::CancelSource>> active_;
};

}  // namespace bridge::mcp::http_detail
