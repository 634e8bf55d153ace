// Streamable HTTP (MCP 2025-03-26+): every message is a POST that accepts JSON or an SSE
// stream; the session id from initialize goes back in `Mcp-Session-Id`, the negotiated revision
// in `MCP-Protocol-Version`. A request whose SSE stream drops before its answer is resumed with
// a GET carrying `Last-Event-ID`. A GET stream carries the server's own messages when it offers
// one. Close sends DELETE.
//
// The older HTTP+SSE transport (MCP 2024-11-05) is here too: one long GET whose first event
// names the endpoint (often relative) to POST to; POSTs are answered 202 and the responses
// arrive on the GET stream.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url.hpp>
#include <spdlog/spdlog.h>

#include <map>

#include "bridge/http/http_client.hpp"
#include "bridge/http/sse_decoder.hpp"
#include "bridge/mcp/errors.hpp"
#include "acp/json_rpc.hpp"
#include "bridge/mcp/jsonrpc.hpp"
#include "bridge/mcp/transport.hpp"

namespace bridge::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using bridge::http::HttpFailure;
using bridge::http::HttpRequest;
using bridge::http::HttpResponseHead;
using bridge::http::SseDecoder;
using bridge::http::SseEvent;
using bridge::http::StreamOptions;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

namespace {

using HeadFn = std::function<void(const HttpResponseHead&)>;
using DataFn = std::function<void(std::string_view)>;
constexpr std::size_t kMaxBody = 64 * 1024 * 1024;
constexpr int kMaxResumes = 3;

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return false;
  return true;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (s.size() > 300) s = s.substr(0, 300) + "…";
  return s;
}

// Shared bits: handlers, cancellation of every stream on close, posting deliveries.
class HttpBase : public Transport {
 protected:
  HttpBase(asio::any_io_executor ex, std::string url, std::vector<std::pair<std::string, std::string>> headers,
           std::string log_id)
      : ex_(std::move(ex)), url_(std::move(url)), headers_(std::move(headers)), log_id_(std::move(log_id)) {}

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
  void feed_events(SseDecoder& dec, std::string_view chunk, const std::function<void(SseEvent&)>& on_event) {
    std::vector<SseEvent> events;
    dec.feed(chunk, events);
    for (auto& e : events) on_event(e);
  }

  asio::any_io_executor ex_;
  std::string url_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::string log_id_;
  Handlers handlers_;
  bool stopped_ = false;
  std::uint64_t next_key_ = 1;
  std::map<std::uint64_t, std::shared_ptr<support::CancelSource>> active_;
};

// ------------------------------------------------------------------------------------------
class StreamableHttpTransport : public HttpBase {
 public:
  StreamableHttpTransport(asio::any_io_executor ex, HttpSpec spec, std::string log_id)
      : HttpBase(std::move(ex), std::move(spec.url), std::move(spec.headers), std::move(log_id)) {}
  ~StreamableHttpTransport() override { cancel_all(); }

  asio::awaitable<void> start(Handlers handlers, std::chrono::milliseconds timeout) override {
    auto parsed = boost::urls::parse_uri(url_);
    if (!parsed || (parsed->scheme() != "http" && parsed->scheme() != "https"))
      throw McpError(McpError::Kind::Transport, "not an http(s) URL: " + url_);
    handlers_ = std::move(handlers);
    connect_timeout_ = timeout;
    co_return;
  }

  void send(json::object message) override {
    if (stopped_) {
      if (acp::json_rpc::is_request(message)) deliver_later(error_response(message.at("id"), -32000, "the MCP connection is closed"));
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
    asio::co_spawn(ex_, [self, m = std::move(message)]() mutable { return self->post(std::move(m)); }, asio::detached);
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
      HttpRequest req{"DELETE", url_, common_headers(), ""};
      StreamOptions opts;
      opts.connect_timeout = std::chrono::seconds(2);
      opts.idle_timeout = std::chrono::seconds(2);
      session_id_.clear();
      HeadFn on_head = [](const HttpResponseHead&) {};
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

  StreamOptions options() const {
    StreamOptions o;
    o.connect_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(connect_timeout_);
    o.idle_timeout = std::chrono::hours(1);  // the client's own timeouts bound requests
    return o;
  }

  asio::awaitable<void> post(json::object message) {
    auto self = shared_from_this();
    const bool req = acp::json_rpc::is_request(message);
    const json::value id = req ? message.at("id") : json::value(nullptr);
    const std::string id_key = req ? json::serialize(id) : std::string();
    const bool is_init = req && message.at("method").as_string() == "initialize";
    std::uint64_t key = 0;
    auto cancel = track(key);
    if (req) by_request_[id_key] = key;

    HttpRequest request{"POST", url_, common_headers(), json::serialize(message)};
    request.headers.emplace_back("Content-Type", "application/json");
    request.headers.emplace_back("Accept", "application/json, text/event-stream");
    HttpResponseHead head;
    bool sse = false;
    bool answered = false;
    std::string body;
    SseDecoder dec;
    std::optional<int> retry_ms;
    auto on_event = [&](SseEvent& e) {
      if (e.retry_ms) retry_ms = e.retry_ms;
      if (!e.event.empty() && e.event != "message") return;
      if (e.data.empty()) return;
      for (auto& m : parse_messages(e.data, log_id_)) {
        if (req && !m.contains("method") && m.contains("id") && json::serialize(m.at("id")) == id_key) answered = true;
        deliver(std::move(m));
      }
    };
    HeadFn on_head = [&](const HttpResponseHead& h) {
      head = h;
      sse = starts_with_ci(h.header("content-type"), "text/event-stream");
      if (is_init && h.status / 100 == 2) {
        auto sid = h.header("mcp-session-id");
        if (!sid.empty()) session_id_ = sid;
      }
    };
    DataFn on_data = [&](std::string_view chunk) {
      if (stopped_) return;
      if (sse && head.status / 100 == 2) feed_events(dec, chunk, on_event);
      else if (body.size() < kMaxBody) body.append(chunk);
    };
    const StreamOptions opts = options();
    auto failure = co_await bridge::http::stream_request(request, opts, std::move(on_head), std::move(on_data), cancel.get());
    if (sse && !stopped_) {
      std::vector<SseEvent> rest;
      dec.finish(rest);
      for (auto& e : rest) on_event(e);
    }
    // A dropped answer stream is resumed where it broke off.
    for (int attempt = 0; req && sse && !answered && !stopped_ && !cancel->cancelled() &&
                          !dec.last_event_id().empty() && head.status / 100 == 2 && attempt < kMaxResumes;
         ++attempt) {
      asio::steady_timer t(ex_, std::chrono::milliseconds(retry_ms.value_or(200)));
      co_await t.async_wait(kTuple);
      if (stopped_ || cancel->cancelled()) break;
      spdlog::debug("mcp {}: resuming the answer stream of {} after event {}", log_id_, id_key, dec.last_event_id());
      HttpRequest get{"GET", url_, common_headers(), ""};
      get.headers.emplace_back("Accept", "text/event-stream");
      get.headers.emplace_back("Last-Event-ID", dec.last_event_id());
      SseDecoder dec2;
      int status = 0;
      HeadFn resume_head = [&](const HttpResponseHead& h) { status = h.status; };
      DataFn resume_data = [&](std::string_view chunk) {
        if (status / 100 == 2 && !stopped_) feed_events(dec2, chunk, on_event);
      };
      failure = co_await bridge::http::stream_request(get, opts, std::move(resume_head), std::move(resume_data), cancel.get());
      if (!dec2.last_event_id().empty()) dec = dec2;
      if (status / 100 != 2) break;
    }
    untrack(key);
    if (req) by_request_.erase(id_key);
    if (stopped_ || cancel->cancelled()) co_return;
    if (!req) {
      if (failure) spdlog::debug("mcp {}: POST of a notification failed: {}", log_id_, failure->message);
      else if (head.status / 100 != 2)
        spdlog::debug("mcp {}: POST of a notification/response answered HTTP {}", log_id_, head.status);
      co_return;
    }
    if (answered) co_return;
    if (head.status == 0 && failure) {
      deliver(error_response(id, -32000, "cannot reach " + url_ + ": " + failure->message));
      co_return;
    }
    if (head.status / 100 != 2) {
      std::string msg = "HTTP " + std::to_string(head.status) + " from " + url_;
      if (head.status == 404 && !session_id_.empty()) msg += " (the server no longer knows this session)";
      std::string detail = trimmed(body);
      // A JSON-RPC error in the body is the real answer.
      if (!detail.empty()) {
        for (auto& m : parse_messages(body, log_id_)) {
          if (m.contains("error") && m.contains("id") && !m.at("id").is_null()) {
            deliver(std::move(m));
            co_return;
          }
          if (auto* e = m.if_contains("error")) detail = acp::json_rpc::error_from(*e).what();
        }
        msg += ": " + detail;
      }
      deliver(error_response(id, -32000, msg));
      co_return;
    }
    if (!sse) {
      for (auto& m : parse_messages(body, log_id_)) {
        if (!m.contains("method") && m.contains("id") && json::serialize(m.at("id")) == id_key) answered = true;
        deliver(std::move(m));
      }
      if (!answered) deliver(error_response(id, -32000, "the server answered HTTP " + std::to_string(head.status) + " without a response"));
      co_return;
    }
    deliver(error_response(id, -32000,
                           "the server closed the response stream before answering" +
                               (failure ? " (" + failure->message + ")" : std::string())));
  }

  // The GET stream: the server's own requests and notifications. Optional (405 = none).
  asio::awaitable<void> listen() {
    auto self = shared_from_this();
    int failures = 0;
    std::string last_id;
    while (!stopped_ && failures < 5) {
      std::uint64_t key = 0;
      auto cancel = track(key);
      HttpRequest get{"GET", url_, common_headers(), ""};
      get.headers.emplace_back("Accept", "text/event-stream");
      if (!last_id.empty()) get.headers.emplace_back("Last-Event-ID", last_id);
      SseDecoder dec;
      int status = 0;
      bool sse = false;
      std::optional<int> retry_ms;
      auto on_event = [&](SseEvent& e) {
        if (e.retry_ms) retry_ms = e.retry_ms;
        if ((!e.event.empty() && e.event != "message") || e.data.empty()) return;
        for (auto& m : parse_messages(e.data, log_id_)) deliver(std::move(m));
      };
      HeadFn on_head = [&](const HttpResponseHead& h) {
        status = h.status;
        sse = starts_with_ci(h.header("content-type"), "text/event-stream");
      };
      DataFn on_data = [&](std::string_view chunk) {
        if (status / 100 == 2 && sse && !stopped_) feed_events(dec, chunk, on_event);
      };
      const StreamOptions opts = options();
      auto failure = co_await bridge::http::stream_request(get, opts, std::move(on_head), std::move(on_data), cancel.get());
      untrack(key);
      if (stopped_ || cancel->cancelled()) co_return;
      if (!dec.last_event_id().empty()) last_id = dec.last_event_id();
      if (status == 405 || status == 404 || (status / 100 == 2 && !sse)) {
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

// ------------------------------------------------------------------------------------------
class SseTransport : public HttpBase {
 public:
  SseTransport(asio::any_io_executor ex, SseSpec spec, std::string log_id)
      : HttpBase(ex, std::move(spec.url), std::move(spec.headers), std::move(log_id)), ready_(ex) {}
  ~SseTransport() override { cancel_all(); }

  asio::awaitable<void> start(Handlers handlers, std::chrono::milliseconds timeout) override {
    auto parsed = boost::urls::parse_uri(url_);
    if (!parsed || (parsed->scheme() != "http" && parsed->scheme() != "https"))
      throw McpError(McpError::Kind::Transport, "not an http(s) URL: " + url_);
    handlers_ = std::move(handlers);
    auto self = std::static_pointer_cast<SseTransport>(shared_from_this());
    asio::co_spawn(ex_, [self, timeout]() { return self->listen(timeout); }, asio::detached);
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
      if (acp::json_rpc::is_request(message)) deliver_later(error_response(message.at("id"), -32000, "the MCP connection is closed"));
      return;
    }
    auto self = std::static_pointer_cast<SseTransport>(shared_from_this());
    asio::co_spawn(ex_, [self, m = std::move(message)]() mutable { return self->post(std::move(m)); }, asio::detached);
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

  asio::awaitable<void> listen(std::chrono::milliseconds connect_timeout) {
    auto self = shared_from_this();
    std::uint64_t key = 0;
    auto cancel = track(key);
    HttpRequest get{"GET", url_, headers_, ""};
    get.headers.emplace_back("Accept", "text/event-stream");
    StreamOptions opts;
    opts.connect_timeout = connect_timeout;
    opts.idle_timeout = std::chrono::hours(24);
    SseDecoder dec;
    int status = 0;
    std::string body;
    auto on_event = [&](SseEvent& e) {
      if (e.event == "endpoint") {
        if (endpoint_.empty()) set_endpoint(e.data);
        return;
      }
      if ((!e.event.empty() && e.event != "message") || e.data.empty()) return;
      for (auto& m : parse_messages(e.data, log_id_)) deliver(std::move(m));
    };
    HeadFn on_head = [&](const HttpResponseHead& h) { status = h.status; };
    DataFn on_data = [&](std::string_view chunk) {
      if (stopped_) return;
      if (status / 100 == 2) feed_events(dec, chunk, on_event);
      else if (body.size() < 4096) body.append(chunk);
    };
    auto failure = co_await bridge::http::stream_request(get, opts, std::move(on_head), std::move(on_data), cancel.get());
    untrack(key);
    if (stopped_) co_return;
    std::string reason;
    if (status == 0 && failure) reason = "cannot reach " + url_ + ": " + failure->message;
    else if (status / 100 != 2) reason = "HTTP " + std::to_string(status) + " from " + url_ + (body.empty() ? "" : ": " + trimmed(body));
    else reason = "the SSE stream ended" + (failure ? " (" + failure->message + ")" : std::string());
    if (endpoint_.empty()) {
      start_error_ = reason;
      ready_.cancel();
      co_return;
    }
    closed(reason);
  }

  asio::awaitable<void> post(json::object message) {
    auto self = shared_from_this();
    const bool req = acp::json_rpc::is_request(message);
    const json::value id = req ? message.at("id") : json::value(nullptr);
    std::uint64_t key = 0;
    auto cancel = track(key);
    HttpRequest request{"POST", endpoint_, headers_, json::serialize(message)};
    request.headers.emplace_back("Content-Type", "application/json");
    int status = 0;
    std::string body;
    StreamOptions opts;
    opts.idle_timeout = std::chrono::seconds(60);
    HeadFn on_head = [&](const HttpResponseHead& h) { status = h.status; };
    DataFn on_data = [&](std::string_view chunk) {
      if (body.size() < 4096) body.append(chunk);
    };
    auto failure = co_await bridge::http::stream_request(request, opts, std::move(on_head), std::move(on_data), cancel.get());
    untrack(key);
    if (stopped_ || !req) co_return;
    if (status / 100 == 2) co_return;  // the answer comes on the GET stream
    std::string why = status == 0 && failure ? "cannot reach " + endpoint_ + ": " + failure->message
                                             : "HTTP " + std::to_string(status) + " from " + endpoint_ +
                                                   (body.empty() ? "" : ": " + trimmed(body));
    deliver(error_response(id, -32000, why));
  }

  asio::steady_timer ready_;
  std::string endpoint_;
  std::string start_error_;
};

}  // namespace

std::shared_ptr<Transport> make_http_transport(asio::any_io_executor ex, HttpSpec spec, std::string log_id) {
  return std::make_shared<StreamableHttpTransport>(std::move(ex), std::move(spec), std::move(log_id));
}

std::shared_ptr<Transport> make_sse_transport(asio::any_io_executor ex, SseSpec spec, std::string log_id) {
  return std::make_shared<SseTransport>(std::move(ex), std::move(spec), std::move(log_id));
}

}  // namespace bridge::mcp
