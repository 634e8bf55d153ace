// Streamable HTTP (acp/http_stream_transport.hpp). Each ACP connection is a State shared by the
// registry, the transport the connection writes to, and the requests being answered. All of it
// runs on the io thread: send() (any thread) posts the routing of each message there.
#include "acp/http_stream_transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <optional>
#include <random>
#include <vector>

#include "acp/message_reader.hpp"
#include "support/json_read.hpp"

namespace acp {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

constexpr auto kKeepAliveInterval = std::chrono::seconds(15);
constexpr std::string_view kConnectionIdHeader = "Acp-Connection-Id";
constexpr std::string_view kSessionIdHeader = "Acp-Session-Id";

// The methods whose POST must name its session in Acp-Session-Id (the SDK's protocol.js).
bool requires_session_header(std::string_view method) {
  static constexpr std::string_view kMethods[] = {
      "session/cancel", "session/close",  "session/delete",          "session/fork",     "session/load",
      "session/prompt", "session/resume", "session/set_config_option", "session/set_mode", "session/set_model"};
  return std::find(std::begin(kMethods), std::end(kMethods), method) != std::end(kMethods);
}

std::string new_connection_id() {
  std::random_device random;
  std::string id;
  for (int i = 0; i < 4; ++i) {
    char part[9];
    std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(random()));
    id += part;
  }
  return id;
}

std::string session_of(const json::object& message) {
  const auto* params = message.if_contains("params");
  const auto* object = params ? params->if_object() : nullptr;
  return object ? std::string(support::str_at(*object, "sessionId")) : std::string();
}

// One outbound stream: what waits for the client's GET, and that GET's wake-up.
struct Mailbox {
  explicit Mailbox(asio::any_io_executor ex) : wake(ex, asio::steady_timer::time_point::max()) {}
  void push(std::string line) {
    queue.push_back(std::move(line));
    wake.cancel();
  }
  void finish() {
    finished = true;
    wake.cancel();
  }
  // Nothing of it is queued or being written: what was pushed has reached the client's socket.
  bool drained() const { return queue.empty() && !writing; }
  std::deque<std::string> queue;
  // Lines for the connection's stream that must not overtake this stream's (a session/load's
  // reply after the session's replay); moved there once this one is drained or ends.
  std::vector<std::string> then_connection;
  bool has_receiver = false;
  bool writing = false;
  bool finished = false;
  asio::steady_timer wake;
};

// Where the reply to a POSTed request goes: `stream` ("": the connection's), after everything
// already sent on session `after_session`'s stream (session/load: its replay).
struct ReplyRoute {
  std::string stream;
  std::string after_session;
};

// Writes a whole response; returns whether the TCP connection may carry another request. Its
// arguments are views and enums: GCC 12 destroys class temporaries in a co_await expression twice.
template <class Stream>
asio::awaitable<bool> reply(Stream& stream, const HttpConnections::Request& req, http::status status,
                            std::string_view body = {}, std::string_view content_type = "text/plain",
                            std::string_view connection_id = {}) {
  http::response<http::string_body> res{status, req.version()};
  if (!body.empty()) res.set(http::field::content_type, content_type);
  if (!connection_id.empty()) res.set(kConnectionIdHeader, connection_id);
  res.keep_alive(req.keep_alive());
  res.body() = std::string(body);
  res.prepare_payload();
  auto [ec, n] = co_await http::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
  co_return !ec && res.keep_alive();
}

}  // namespace

struct HttpConnections::State : std::enable_shared_from_this<State> {
  State(asio::any_io_executor ex, std::string connection_id)
      : executor(ex), id(std::move(connection_id)), connection_stream(ex), initial_ready(ex, asio::steady_timer::time_point::max()),
        idle(ex) {}

  // A request or an event stream's start or end: the idle clock starts again.
  void touch() { last_activity = std::chrono::steady_clock::now(); }

  void send(std::string line) {
    asio::post(executor, [self = shared_from_this(), line = std::move(line)]() mutable { self->route(std::move(line)); });
  }

  Mailbox& session_stream(const std::string& session) {
    auto& box = sessions[session];
    if (!box) box = std::make_unique<Mailbox>(executor);
    return *box;
  }
  Mailbox& stream_for(const std::string& session) { return session.empty() ? connection_stream : session_stream(session); }

  // Where a message of the agent goes: the initialize reply to its POST; another reply where its
  // request was POSTed for; a request or notification to its session's stream, if it names one.
  void route(std::string line) {
    if (closed) return;
    boost::system::error_code ec;
    const json::value v = json::parse(line, ec);
    const json::object* o = ec ? nullptr : v.if_object();
    if (!o) return connection_stream.push(std::move(line));
    const json::value* id = o->if_contains("id");
    if (id && !o->contains("method")) {
      const std::string key = json::serialize(*id);
      if (key == initial_id && !initial_response) {
        initial_response = std::move(line);
        initial_ready.cancel();
        return;
      }
      ReplyRoute reply;
      if (auto it = pending_routes.find(key); it != pending_routes.end()) {
        reply = std::move(it->second);
        pending_routes.erase(it);
      }
      if (!reply.after_session.empty()) {
        Mailbox& before = session_stream(reply.after_session);
        if (before.has_receiver && !before.drained()) return before.then_connection.push_back(std::move(line));
      }
      return stream_for(reply.stream).push(std::move(line));
    }
    stream_for(session_of(*o)).push(std::move(line));
  }

  // `box` was drained or lost its receiver: what waited for it goes to the connection's stream.
  void release_waiting(Mailbox& box) {
    for (auto& line : box.then_connection) connection_stream.push(std::move(line));
    box.then_connection.clear();
  }

  void close() {
    closed = true;
    connection_stream.finish();
    for (auto& [_, box] : sessions) box->finish();
    initial_ready.cancel();
    idle.cancel();
    if (std::exchange(disconnected, true)) return;
    if (handlers.on_disconnect) handlers.on_disconnect();
  }

  asio::any_io_executor executor;
  std::string id;
  Transport::Handlers handlers;
  Mailbox connection_stream;
  std::map<std::string, std::unique_ptr<Mailbox>> sessions;  // never erased: a GET may hold one
  std::map<std::string, ReplyRoute> pending_routes;  // a POSTed request's id -> where its reply goes
  std::string initial_id;                             // the initialize request's id
  std::optional<std::string> initial_response;
  asio::steady_timer initial_ready;
  asio::steady_timer idle;  // HttpConnections::end_when_idle's
  std::chrono::steady_clock::time_point last_activity = std::chrono::steady_clock::now();
  int open_streams = 0;     // GETs being answered
  bool closed = false;
  bool disconnected = false;
};

namespace {

class HttpTransport : public Transport {
 public:
  explicit HttpTransport(std::shared_ptr<HttpConnections::State> state) : state_(std::move(state)) {}
  void send(std::string line) override { state_->send(std::move(line)); }
  void start(Handlers handlers) override { state_->handlers = std::move(handlers); }

 private:
  std::shared_ptr<HttpConnections::State> state_;
};

}  // namespace

HttpConnections::HttpConnections(asio::any_io_executor executor, OnConnection on_connection,
                                 std::shared_ptr<ConnectionSlots> slots, std::chrono::steady_clock::duration idle_timeout)
    : executor_(std::move(executor)), on_connection_(std::move(on_connection)), slots_(std::move(slots)),
      idle_timeout_(idle_timeout) {}

HttpConnections::~HttpConnections() { close_all(); }

void HttpConnections::close_all() {
  auto all = std::move(connections_);
  connections_.clear();
  for (auto& [_, state] : all) state->close();
}

bool HttpConnections::remove(const std::string& id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return false;
  auto state = it->second;
  connections_.erase(it);
  state->close();
  return true;
}

// Ends `state` as a DELETE would once it has had no event stream open and no request for
// idle_timeout_.
asio::awaitable<void> HttpConnections::end_when_idle(std::shared_ptr<State> state) {
  while (!state->closed) {
    state->idle.expires_at(state->last_activity + idle_timeout_);
    co_await state->idle.async_wait(asio::as_tuple(asio::use_awaitable));  // cancelled when closed
    if (state->closed) break;
    if (state->open_streams > 0 || std::chrono::steady_clock::now() < state->last_activity + idle_timeout_) {
      if (state->open_streams > 0) state->touch();
      continue;
    }
    spdlog::info("Streamable HTTP connection idle for {} s with no event stream: ending it",
                 std::chrono::duration_cast<std::chrono::seconds>(idle_timeout_).count());
    remove(state->id);
  }
}

template <class Stream>
asio::awaitable<bool> HttpConnections::handle(Stream& stream, Request req) {
  if (req.method() == http::verb::post) co_return co_await post(stream, req);
  if (req.method() == http::verb::get) co_return co_await get(stream, req);
  if (req.method() != http::verb::delete_)
    co_return co_await reply(stream, req, http::status::method_not_allowed, "Method Not Allowed");
  const std::string id(req[kConnectionIdHeader]);
  if (id.empty()) co_return co_await reply(stream, req, http::status::bad_request, "Missing Acp-Connection-Id");
  if (!remove(id)) co_return co_await reply(stream, req, http::status::not_found, "Unknown Acp-Connection-Id");
  co_return co_await reply(stream, req, http::status::accepted, "");
}

template <class Stream>
asio::awaitable<bool> HttpConnections::post(Stream& stream, const Request& req) {
  const auto content_type = req[http::field::content_type];
  std::string media(content_type.substr(0, content_type.find(';')));
  media.erase(std::remove(media.begin(), media.end(), ' '), media.end());
  std::transform(media.begin(), media.end(), media.begin(), [](unsigned char c) { return std::tolower(c); });
  if (media != "application/json")
    co_return co_await reply(stream, req, http::status::unsupported_media_type, "Unsupported Media Type");
  IncomingMessage message = MessageReader::parse_line(req.body());
  if (message.problem != IncomingMessage::Problem::None) co_return co_await reply(stream, req, http::status::bad_request, "Invalid JSON");
  if (message.value.is_array())
    co_return co_await reply(stream, req, http::status::bad_request,
                             R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: JSON-RPC batches are not supported"}})",
                             "application/json");
  if (!message.value.is_object()) co_return co_await reply(stream, req, http::status::bad_request, "Invalid JSON-RPC message");
  const json::object& o = message.value.as_object();
  const json::value* id = o.if_contains("id");
  const std::string method(support::str_at(o, "method"));
  const std::string connection_id(req[kConnectionIdHeader]);
  if (method == "initialize" && id) {
    if (!connection_id.empty()) co_return co_await reply(stream, req, http::status::bad_request, "Initialize not allowed on existing connection");
    if (id->is_null()) co_return co_await reply(stream, req, http::status::bad_request, "Initialize request must include an ID");
    auto slot = slots_->take();
    if (!slot) {
      const std::string refusal = slots_->refusal();
      co_return co_await reply(stream, req, http::status::service_unavailable, refusal);
    }
    auto state = std::make_shared<State>(executor_, new_connection_id());
    state->initial_id = json::serialize(*id);
    connections_[state->id] = state;
    on_connection_(std::make_unique<HttpTransport>(state), std::move(*slot));
    asio::co_spawn(executor_, end_when_idle(state), asio::detached);
    state->handlers.on_message(std::move(message));
    while (!state->initial_response && !state->closed)
      co_await state->initial_ready.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!state->initial_response) co_return co_await reply(stream, req, http::status::not_found, "Unknown Acp-Connection-Id");
    co_return co_await reply(stream, req, http::status::ok, *state->initial_response, "application/json", state->id);
  }
  if (connection_id.empty()) co_return co_await reply(stream, req, http::status::bad_request, "Missing Acp-Connection-Id");
  auto it = connections_.find(connection_id);
  if (it == connections_.end()) co_return co_await reply(stream, req, http::status::not_found, "Unknown Acp-Connection-Id");
  auto state = it->second;
  state->touch();
  if (!method.empty()) {
    const std::string header(req[kSessionIdHeader]);
    const std::string in_params = session_of(o);
    if ((requires_session_header(method) || !in_params.empty()) && header.empty()) co_return co_await reply(stream, req, http::status::bad_request, "Missing Acp-Session-Id");
    if (!header.empty() && !in_params.empty() && header != in_params) co_return co_await reply(stream, req, http::status::bad_request, "Mismatched Acp-Session-Id");
    // A session/load replies on the connection's stream (as the SDK's AcpServer does), once the
    // session's replay went out on its own stream: a client must not see the reply first.
    const std::string session = header.empty() ? in_params : header;
    if (id)
      state->pending_routes[json::serialize(*id)] =
          method == "session/load" ? ReplyRoute{"", session} : ReplyRoute{session, ""};
  }
  state->handlers.on_message(std::move(message));
  co_return co_await reply(stream, req, http::status::accepted, "");
}

// The event stream of a connection or of one of its sessions, until the connection ends or
// the client goes. A comment line every kKeepAliveInterval keeps proxies from closing it.
template <class Stream>
asio::awaitable<bool> HttpConnections::get(Stream& stream, const Request& req) {
  if (req[http::field::accept].find("text/event-stream") == std::string_view::npos)
    co_return co_await reply(stream, req, http::status::not_acceptable, "Not Acceptable");
  const std::string connection_id(req[kConnectionIdHeader]);
  if (connection_id.empty()) co_return co_await reply(stream, req, http::status::bad_request, "Missing Acp-Connection-Id");
  auto it = connections_.find(connection_id);
  if (it == connections_.end()) co_return co_await reply(stream, req, http::status::not_found, "Unknown Acp-Connection-Id");
  auto state = it->second;
  Mailbox& box = state->stream_for(std::string(req[kSessionIdHeader]));
  if (box.has_receiver)
    co_return co_await reply(stream, req, http::status::conflict, "Outbound stream already has an active receiver");
  box.has_receiver = true;
  ++state->open_streams;
  state->touch();
  http::response<http::empty_body> head{http::status::ok, req.version()};
  head.set(http::field::content_type, "text/event-stream");
  head.set(http::field::cache_control, "no-cache");
  head.keep_alive(false);  // the body runs until the stream ends
  http::response_serializer<http::empty_body> serializer(head);
  auto [ec, n] = co_await http::async_write_header(stream, serializer, asio::as_tuple(asio::use_awaitable));
  while (!ec) {
    std::string events;
    if (box.queue.empty()) {
      if (box.finished) break;
      box.wake.expires_after(kKeepAliveInterval);
      auto [timer_ec] = co_await box.wake.async_wait(asio::as_tuple(asio::use_awaitable));
      if (timer_ec || !box.queue.empty() || box.finished) continue;
      events = ":\n\n";
    }
    for (auto& line : box.queue) (events += "data: ").append(line) += "\n\n";
    box.queue.clear();
    box.writing = true;
    std::tie(ec, n) = co_await asio::async_write(stream, asio::buffer(events), asio::as_tuple(asio::use_awaitable));
    box.writing = false;
    if (box.drained()) state->release_waiting(box);
  }
  state->release_waiting(box);
  box.has_receiver = false;
  --state->open_streams;
  state->touch();
  co_return false;
}

template asio::awaitable<bool> HttpConnections::handle(PlainStream&, Request);
template asio::awaitable<bool> HttpConnections::handle(TlsStream&, Request);

}  // namespace acp
