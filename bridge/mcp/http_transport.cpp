// Streamable HTTP (MCP 2025-03-26+): every message is a POST that accepts JSON or an SSE
// stream; the session id from initialize goes back in `Mcp-Session-Id`, the negotiated revision
// in `MCP-Protocol-Version`. A request whose SSE stream drops before its answer is resumed with
// a GET carrying `Last-Event-ID`. A GET stream carries the server's own messages when it offers
// one. Close sends DELETE.
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

constexpr int kMaxResumes = 3;  // resumptions of a request's SSE stream (GET with Last-Event-ID)

class StreamableHttpTransport : public HttpBase {
 public:
  StreamableHttpTransport(asio::any_io_executor ex, HttpSpec spec, std::string log_id)
      : HttpBase(std::move(ex), std::move(spec.url), std::move(spec.headers), std::move(log_id), std::move(spec.auth), std::move(spec.connect_to)) {}
  ~StreamableHttpTransport() override { cancel_all(); }

  asio::awaitable<void> start(Handlers handlers, std::chrono::milliseconds timeout) override {
    take_handlers(std::move(handlers));
    connect_timeout_ = timeout;
    co_return;
  }

  void send(json::object message) override {
    if (stopped_) {
      if (support::json_rpc::is_request(message)) deliver_later(error_response(message.at("id"), -32000, "the MCP connection is closed"));
      return;
    }
    // The client gave up on a request: stop reading its stream too.
    if (auto* m = message.if_contains("method"); m && m->is_string() && m->as_string() == "notifications/cancelled") {
      if (auto* p = message.if_contains("params"); p && p->is_object())
        if (auto* rid = p->as_object().if_contains("requestId")) {
          auto it = by_request_.find(json::serialize(*rid));
          if (it != by_request_.end())
            if (auto a = active_.find(it->second); a != active_.end()) a->second->cancel();
        }
    }
    auto self = std::static_pointer_cast<StreamableHttpTransport>(shared_from_this());
    asio::co_spawn(ex_, [self, m = std::move(message)]() mutable { return self->post(std::move(m), false); }, asio::detached);
  }

  void set_protocol_version(const std::string& v) override {
    protocol_version_ = v;
    if (!listening_) {
      listening_ = true;
      auto self = std::static_pointer_cast<StreamableHttpTransport>(shared_from_this());
      asio::co_spawn(ex_, [self]() { return self->listen(); }, asio::detached);
    }
  }

  asio::awaitable<void> close() override {
    if (stopped_ && session_id_.empty()) co_return;
    stopped_ = true;
    handlers_ = {};
    cancel_all();
    if (!session_id_.empty()) {
      auto self = shared_from_this();
      http::HttpRequest req = make_request("DELETE", url_, common_headers(), "");
      http::StreamOptions opts;
      opts.connect_timeout = std::chrono::seconds(2);
      opts.idle_timeout = std::chrono::seconds(2);
      session_id_.clear();
      HeadFn on_head = [](const http::HttpResponseHead&) {};
      DataFn on_data = [](std::string_view) {};
      auto failure = co_await bridge::http::stream_request(req, opts, std::move(on_head), std::move(on_data), nullptr);
      if (failure) spdlog::debug("mcp {}: DELETE failed: {}", log_id_, failure->message);
    }
  }

  void kill_now() override {
    stopped_ = true;
    handlers_ = {};
    cancel_all();
  }

  std::string describe() const override { return "http " + url_; }

 private:
  std::vector<std::pair<std::string, std::string>> common_headers() const {
    auto h = headers_;
    if (!session_id_.empty()) h.emplace_back("Mcp-Session-Id", session_id_);
    if (!protocol_version_.empty()) h.emplace_back("MCP-Protocol-Version", protocol_version_);
    return h;
  }

  http::StreamOptions options() const {
    http::StreamOptions o;
    o.connect_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(connect_timeout_);
    o.idle_timeout = std::chrono::hours(1);  // the client's own timeouts bound requests
    return o;
  }

  // One POST of a message and what came back: the answer's head, the body (JSON) or the SSE
  // stream's decoder, and whether the request's response was delivered.
  struct Post {
    bool req = false;
    json::value id;
    std::string id_key;  // the serialized id of a request
    bool is_init = false;
    http::HttpResponseHead head;
    bool sse = false;
    bool answered = false;
    std::string body;
    http::SseDecoder dec;
    std::optional<int> retry_ms;
    std::shared_ptr<support::CancelSource> cancel;
  };

  // Delivers the messages of an SSE event of the POST's stream, noting the request's answer.
  void on_post_event(Post& p, http::SseEvent& e) {
    if (e.retry_ms) p.retry_ms = e.retry_ms;
    if (!e.event.empty() && e.event != "message") return;
    if (e.data.empty()) return;
    for (auto& m : parse_messages(e.data, log_id_)) {
      if (p.req && !m.contains("method") && m.contains("id") && json::serialize(m.at("id")) == p.id_key) p.answered = true;
      deliver(std::move(m));
    }
  }

  // `retried`: sent again after a 401 with a new token (once).
  asio::awaitable<void> post(json::object message, bool retried) {
    auto self = shared_from_this();
    Post p;
    p.req = support::json_rpc::is_request(message);
    p.id = p.req ? message.at("id") : json::value(nullptr);
    p.id_key = p.req ? json::serialize(p.id) : std::string();
    p.is_init = p.req && message.at("method").as_string() == "initialize";
    std::uint64_t key = 0;
    p.cancel = track(key);
    if (p.req) by_request_[p.id_key] = key;

    http::HttpRequest request = make_request("POST", url_, common_headers(), json::serialize(message));
    support::repair_utf8(request.body);
    request.headers.emplace_back("Content-Type", "application/json");
    request.headers.emplace_back("Accept", "application/json, text/event-stream");
    const auto sent_token = co_await authorize(request.headers);
    auto failure = co_await send_post(p, request);
    co_await resume_answer_stream(p, failure);
    untrack(key);
    if (p.req) by_request_.erase(p.id_key);
    if (stopped_ || p.cancel->cancelled()) co_return;
    if (!retried && co_await reauthorize(p.head, sent_token)) {
      co_await post(std::move(message), true);
      co_return;
    }
    settle(p, failure);
  }

  // The POST itself: its answer is JSON (kept in `p.body`) or an SSE stream (delivered).
  asio::awaitable<std::optional<http::HttpFailure>> send_post(Post& p, const http::HttpRequest& request) {
    HeadFn on_head = [this, &p](const http::HttpResponseHead& h) {
      p.head = h;
      p.sse = starts_with_ci(h.header("content-type"), "text/event-stream");
      if (p.is_init && h.status / 100 == 2) {
        auto sid = h.header("mcp-session-id");
        if (!sid.empty()) session_id_ = sid;
      }
    };
    DataFn on_data = [this, &p](std::string_view chunk) {
      if (stopped_) return;
      if (p.sse && p.head.status / 100 == 2) feed_events(p.dec, chunk, [&](http::SseEvent& e) { on_post_event(p, e); });
      else if (p.body.size() < kMaxBody) p.body.append(chunk);
    };
    const http::StreamOptions opts = options();
    auto failure = co_await bridge::http::stream_request(request, opts, std::move(on_head), std::move(on_data), p.cancel.get());
    if (p.sse && !stopped_) {
      std::vector<http::SseEvent> rest;
      p.dec.finish(rest);
      for (auto& e : rest) on_post_event(p, e);
    }
    co_return failure;
  }

  // A dropped answer stream is resumed where it broke off (GET with Last-Event-ID).
  asio::awaitable<void> resume_answer_stream(Post& p, std::optional<http::HttpFailure>& failure) {
    const http::StreamOptions opts = options();
    for (int attempt = 0; p.req && p.sse && !p.answered && !stopped_ && !p.cancel->cancelled() &&
                          !p.dec.last_event_id().empty() && p.head.status / 100 == 2 && attempt < kMaxResumes;
         ++attempt) {
      asio::steady_timer t(ex_, std::chrono::milliseconds(p.retry_ms.value_or(200)));
      co_await t.async_wait(kTuple);
      if (stopped_ || p.cancel->cancelled()) break;
      spdlog::debug("mcp {}: resuming the answer stream of {} after event {}", log_id_, p.id_key, p.dec.last_event_id());
      http::HttpRequest get = make_request("GET", url_, common_headers(), "");
      get.headers.emplace_back("Accept", "text/event-stream");
      get.headers.emplace_back("Last-Event-ID", p.dec.last_event_id());
      co_await authorize(get.headers);
      http::SseDecoder dec2;
      int status = 0;
      HeadFn resume_head = [&](const http::HttpResponseHead& h) { status = h.status; };
      DataFn resume_data = [&](std::string_view chunk) {
        if (status / 100 == 2 && !stopped_) feed_events(dec2, chunk, [&](http::SseEvent& e) { on_post_event(p, e); });
      };
      failure = co_await bridge::http::stream_request(get, opts, std::move(resume_head), std::move(resume_data), p.cancel.get());
      if (!dec2.last_event_id().empty()) p.dec = dec2;
      if (status / 100 != 2) break;
    }
  }

  // After the exchange: a request not answered on its stream gets its answer from the body, or
  // an error saying what went wrong.
  void settle(Post& p, const std::optional<http::HttpFailure>& failure) {
    if (!p.req) {
      if (failure) spdlog::debug("mcp {}: POST of a notification failed: {}", log_id_, failure->message);
      else if (p.head.status / 100 != 2)
        spdlog::debug("mcp {}: POST of a notification/response answered HTTP {}", log_id_, p.head.status);
      return;
    }
    if (p.answered) return;
    if (p.head.status == 0 && failure) {
      deliver(error_response(p.id, -32000, "cannot reach " + url_ + ": " + failure->message));
      return;
    }
    if (p.head.status / 100 != 2) return settle_http_error(p);
    if (!p.sse) {
      for (auto& m : parse_messages(p.body, log_id_)) {
        if (!m.contains("method") && m.contains("id") && json::serialize(m.at("id")) == p.id_key) p.answered = true;
        deliver(std::move(m));
      }
      if (!p.answered) deliver(error_response(p.id, -32000, "the server answered HTTP " + std::to_string(p.head.status) + " without a response"));
      return;
    }
    deliver(error_response(p.id, -32000,
                           "the server closed the response stream before answering" +
                               (failure ? " (" + failure->message + ")" : std::string())));
  }

  // A request answered with an HTTP error: a JSON-RPC error in the body is the real answer.
  void settle_http_error(Post& p) {
    std::string msg = "HTTP " + std::to_string(p.head.status) + " from " + url_;
    if (p.head.status == 404 && !session_id_.empty()) msg += " (the server no longer knows this session)";
    if (p.head.status == 401) msg += unauthorized_text();
    std::string detail = trimmed(p.body);
    if (!detail.empty()) {
      for (auto& m : parse_messages(p.body, log_id_)) {
        if (m.contains("error") && m.contains("id") && !m.at("id").is_null()) {
          deliver(std::move(m));
          return;
        }
        if (auto* e = m.if_contains("error")) detail = support::json_rpc::error_from(*e).message;
      }
      msg += ": " + detail;
    }
    deliver(error_response(p.id, -32000, msg));
  }

  // The GET stream: the server's own requests and notifications. Optional (405 = none).
  asio::awaitable<void> listen() {
    auto self = shared_from_this();
    int failures = 0;
    std::string last_id;
    while (!stopped_ && failures < 5) {
      std::uint64_t key = 0;
      auto cancel = track(key);
      http::HttpRequest get = make_request("GET", url_, common_headers(), "");
      get.headers.emplace_back("Accept", "text/event-stream");
      if (!last_id.empty()) get.headers.emplace_back("Last-Event-ID", last_id);
      co_await authorize(get.headers);
      http::SseDecoder dec;
      int status = 0;
      bool sse = false;
      std::optional<int> retry_ms;
      auto on_event = [&](http::SseEvent& e) {
        if (e.retry_ms) retry_ms = e.retry_ms;
        if ((!e.event.empty() && e.event != "message") || e.data.empty()) return;
        for (auto& m : parse_messages(e.data, log_id_)) deliver(std::move(m));
      };
      HeadFn on_head = [&](const http::HttpResponseHead& h) {
        status = h.status;
        sse = starts_with_ci(h.header("content-type"), "text/event-stream");
      };
      DataFn on_data = [&](std::string_view chunk) {
        if (status / 100 == 2 && sse && !stopped_) feed_events(dec, chunk, on_event);
      };
      const http::StreamOptions opts = options();
      auto failure = co_await bridge::http::stream_request(get, opts, std::move(on_head), std::move(on_data), cancel.get());
      untrack(key);
      if (stopped_ || cancel->cancelled()) co_return;
      if (!dec.last_event_id().empty()) last_id = dec.last_event_id();
      if (status == 405 || status == 404 || status == 401 || (status / 100 == 2 && !sse)) {
        spdlog::debug("mcp {}: no GET stream (HTTP {})", log_id_, status);
        co_return;
      }
      if (status / 100 == 2 && !failure) failures = 0;
      else ++failures;
      asio::steady_timer t(ex_, std::chrono::milliseconds(retry_ms.value_or(1000)));
      co_await t.async_wait(kTuple);
    }
  }

  std::chrono::milliseconds connect_timeout_{std::chrono::seconds(30)};
  std::string session_id_;
  std::string protocol_version_;
  bool listening_ = false;
  std::map<std::string, std::uint64_t> by_request_;
};

}  // namespace

std::shared_ptr<Transport> make_http_transport(asio::any_io_executor ex, HttpSpec spec, std::string log_id) {
  return std::make_shared<StreamableHttpTransport>(std::move(ex), std::move(spec), std::move(log_id));
}

}  // namespace bridge::mcp
