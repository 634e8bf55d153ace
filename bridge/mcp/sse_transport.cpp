// The older HTTP+SSE transport of MCP (2024-11-05): one long GET whose first event names the
// endpoint (often relative) to POST to; POSTs are answered 202 and the responses arrive on the
// GET stream.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/url.hpp>
#include <spdlog/spdlog.h>

#include "support/json_rpc.hpp"
#include "bridge/mcp/errors.hpp"
#include "bridge/mcp/http_transport_base.hpp"
#include "bridge/mcp/jsonrpc.hpp"
#include "support/text.hpp"

namespace bridge::mcp {

using namespace http_detail;

namespace {

class SseTransport : public HttpBase {
 public:
  SseTransport(asio::any_io_executor ex, SseSpec spec, std::string log_id)
      : HttpBase(ex, std::move(spec.url), std::move(spec.headers), std::move(log_id), std::move(spec.auth), std::move(spec.connect_to)), ready_(ex) {}
  ~SseTransport() override { cancel_all(); }

  asio::awaitable<void> start(Handlers handlers, std::chrono::milliseconds timeout) override {
    take_handlers(std::move(handlers));
    auto self = std::static_pointer_cast<SseTransport>(shared_from_this());
    asio::co_spawn(ex_, [self, timeout]() { return self->listen(timeout, false); }, asio::detached);
    ready_.expires_after(timeout);
    while (endpoint_.empty() && start_error_.empty() && !stopped_) {
      auto [ec] = co_await ready_.async_wait(kTuple);
      if (!ec && endpoint_.empty() && start_error_.empty()) {
        kill_now();
        throw McpError(McpError::Kind::Timeout, "no endpoint event from " + url_ + " within " +
                                                    std::to_string(timeout.count()) + " ms");
      }
    }
    if (!start_error_.empty()) throw McpError(McpError::Kind::Transport, start_error_);
    if (endpoint_.empty()) throw McpError(McpError::Kind::Closed, "the SSE stream closed before the endpoint event");
  }

  void send(json::object message) override {
    if (stopped_ || endpoint_.empty()) {
      if (support::json_rpc::is_request(message)) deliver_later(error_response(message.at("id"), -32000, "the MCP connection is closed"));
      return;
    }
    auto self = std::static_pointer_cast<SseTransport>(shared_from_this());
    asio::co_spawn(ex_, [self, m = std::move(message)]() mutable { return self->post(std::move(m), false); }, asio::detached);
  }

  asio::awaitable<void> close() override {
    kill_now();
    co_return;
  }

  void kill_now() override {
    stopped_ = true;
    handlers_ = {};
    cancel_all();
    ready_.cancel();
  }

  std::string describe() const override { return "sse " + url_; }

 private:
  void set_endpoint(const std::string& data) {
    boost::urls::url base(url_);
    auto ref = boost::urls::parse_uri_reference(data);
    if (!ref) {
      start_error_ = "the server sent an invalid endpoint URL: " + data;
      ready_.cancel();
      return;
    }
    boost::urls::url dest;
    auto r = boost::urls::resolve(base, *ref, dest);
    if (!r) {
      start_error_ = "cannot resolve the endpoint URL " + data;
      ready_.cancel();
      return;
    }
    if (dest.scheme() != base.scheme() || dest.host() != base.host() || dest.port() != base.port()) {
      start_error_ = "the endpoint " + std::string(dest.buffer()) + " is not on the server's origin";
      ready_.cancel();
      return;
    }
    endpoint_ = std::string(dest.buffer());
    spdlog::debug("mcp {}: SSE endpoint {}", log_id_, endpoint_);
    ready_.cancel();
  }

  // `retried`: opened again after a 401 with a new token (once).
  asio::awaitable<void> listen(std::chrono::milliseconds connect_timeout, bool retried) {
    auto self = shared_from_this();
    std::uint64_t key = 0;
    auto cancel = track(key);
    http::HttpRequest get = make_request("GET", url_, headers_, "");
    get.headers.emplace_back("Accept", "text/event-stream");
    const auto sent_token = co_await authorize(get.headers);
    http::StreamOptions opts;
    opts.connect_timeout = connect_timeout;
    opts.idle_timeout = std::chrono::hours(24);
    http::SseDecoder dec;
    int status = 0;
    std::string body;
    auto on_event = [&](http::SseEvent& e) {
      if (e.event == "endpoint") {
        if (endpoint_.empty()) set_endpoint(e.data);
        return;
      }
      if ((!e.event.empty() && e.event != "message") || e.data.empty()) return;
      for (auto& m : parse_messages(e.data, log_id_)) deliver(std::move(m));
    };
    http::HttpResponseHead head;
    HeadFn on_head = [&](const http::HttpResponseHead& h) {
      status = h.status;
      head = h;
    };
    DataFn on_data = [&](std::string_view chunk) {
      if (stopped_) return;
      if (status / 100 == 2) feed_events(dec, chunk, on_event);
      else if (body.size() < 4096) body.append(chunk);
    };
    auto failure = co_await bridge::http::stream_request(get, opts, std::move(on_head), std::move(on_data), cancel.get());
    untrack(key);
    if (stopped_) co_return;
    if (!retried && endpoint_.empty() && co_await reauthorize(head, sent_token)) {
      co_await listen(connect_timeout, true);
      co_return;
    }
    std::string reason;
    if (status == 0 && failure) reason = "cannot reach " + url_ + ": " + failure->message;
    else if (status / 100 != 2)
      reason = "HTTP " + std::to_string(status) + " from " + url_ + (body.empty() ? "" : ": " + trimmed(body)) +
               (status == 401 ? unauthorized_text() : std::string());
    else reason = "the SSE stream ended" + (failure ? " (" + failure->message + ")" : std::string());
    if (endpoint_.empty()) {
      start_error_ = reason;
      ready_.cancel();
      co_return;
    }
    closed(reason);
  }

  asio::awaitable<void> post(json::object message, bool retried) {
    auto self = shared_from_this();
    const bool req = support::json_rpc::is_request(message);
    const json::value id = req ? message.at("id") : json::value(nullptr);
    std::uint64_t key = 0;
    auto cancel = track(key);
    http::HttpRequest request = make_request("POST", endpoint_, headers_, json::serialize(message));
    support::repair_utf8(request.body);
    request.headers.emplace_back("Content-Type", "application/json");
    const auto sent_token = co_await authorize(request.headers);
    int status = 0;
    std::string body;
    http::StreamOptions opts;
    opts.idle_timeout = std::chrono::seconds(60);
    http::HttpResponseHead head;
    HeadFn on_head = [&](const http::HttpResponseHead& h) {
      status = h.status;
      head = h;
    };
    DataFn on_data = [&](std::string_view chunk) {
      if (body.size() < 4096) body.append(chunk);
    };
    auto failure = co_await bridge::http::stream_request(request, opts, std::move(on_head), std::move(on_data), cancel.get());
    untrack(key);
    if (stopped_) co_return;
    if (!retried && co_await reauthorize(head, sent_token)) {
      co_await post(std::move(message), true);
      co_return;
    }
    if (!req) co_return;
    if (status / 100 == 2) co_return;  // the answer comes on the GET stream
    std::string why = status == 0 && failure ? "cannot reach " + endpoint_ + ": " + failure->message
                                             : "HTTP " + std::to_string(status) + " from " + endpoint_ +
                                                   (body.empty() ? "" : ": " + trimmed(body)) +
                                                   (status == 401 ? unauthorized_text() : std::string());
    deliver(error_response(id, -32000, why));
  }

  asio::steady_timer ready_;
  std::string endpoint_;
  std::string start_error_;
};

}  // namespace

std::shared_ptr<Transport> make_sse_transport(asio::any_io_executor ex, SseSpec spec, std::string log_id) {
  return std::make_shared<SseTransport>(std::move(ex), std::move(spec), std::move(log_id));
}

}  // namespace bridge::mcp
