#include "acp/connection.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <vector>

#include "support/json_rpc.hpp"
#include "acp/methods.hpp"
#include "support/text.hpp"

namespace acp {

namespace asio = boost::asio;
namespace json = boost::json;
namespace json_rpc = support::json_rpc;

Connection::Connection(asio::any_io_executor executor, Transport& transport)
    : executor_(std::move(executor)), transport_(transport), pending_(executor_) {}

Connection::~Connection() { close(); }

void Connection::on_request(std::string method, RequestHandler handler) {
  requests_[std::move(method)] = std::move(handler);
}

void Connection::on_notification(std::string method, NotificationHandler handler) {
  notifications_[std::move(method)] = std::move(handler);
}

void Connection::send_object(const json::object& msg) {
  if (closed_) return;
  send_line(json::serialize(msg));
}

void Connection::send_line(std::string line) {
  // Boost.JSON writes strings byte for byte; a file or command output that is not UTF-8 would
  // make the line unreadable to a strict peer. Outside strings the line is ASCII.
  support::repair_utf8(line);
  transport_.send(std::move(line));
}

void Connection::send_error(const json::value& id, int code, std::string_view message,
                            const json::value& data) {
  json::object err{{"code", code}, {"message", message}};
  if (!data.is_null()) err["data"] = data;
  send_object(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}});
}

void Connection::send_result(const json::value& id, json::value result) {
  send_object(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void Connection::notify(std::string_view method, json::object params) {
  send_object(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

void Connection::notify_json(std::string_view method, std::size_t size,
                             const std::function<void(std::string&)>& write_params) {
  if (closed_) return;
  // What notify's object serialises to.
  std::string line;
  line.reserve(size + method.size() + 48);
  line += R"({"jsonrpc":"2.0","method":)";
  line += json::serialize(json::string_view(method));
  line += R"(,"params":)";
  write_params(line);
  line += '}';
  send_line(std::move(line));
}

void Connection::handle_message(IncomingMessage&& message) {
  using Problem = IncomingMessage::Problem;
  // A response we cannot use still answers its call: fail it, or the caller would wait forever.
  if (message.problem != Problem::None && !message.response_id.is_null())
    fail_call(message.response_id, RpcError(error_code::kInternalError, "The client's answer was refused: " + message.error));
  switch (message.problem) {
    case Problem::None:
      handle_value(std::move(message.value));
      return;
    case Problem::Syntax:
      spdlog::debug("unparseable line ({} bytes): {}", message.bytes, message.error);
      send_error(message.reply_id, error_code::kParseError, "Parse error: " + message.error);
      return;
    case Problem::TooDeep:
      spdlog::warn("refused an incoming message of {} bytes: {}", message.bytes, message.error);
      send_error(message.reply_id, error_code::kInvalidRequest, "Invalid request: " + message.error);
      return;
    case Problem::TooLarge:
      spdlog::warn("dropped an incoming line of {} bytes: over the size limit", message.bytes);
      send_error(message.reply_id, error_code::kInvalidRequest, message.error);
      return;
  }
}

void Connection::handle_value(json::value&& msg) {
  if (!msg.is_object()) {
    send_error(nullptr, error_code::kInvalidRequest,
               msg.is_array() ? "Invalid request: batches are not supported"
                              : "Invalid request: a message must be a JSON object");
    return;
  }
  auto& obj = msg.as_object();
  const json::value* id = obj.if_contains("id");
  const bool id_ok = !id || id->is_string() || id->is_int64() || id->is_uint64() || id->is_null();
  const json::value reply_id = (id && id_ok) ? *id : json::value(nullptr);
  auto* version = obj.if_contains("jsonrpc");
  if (!version || !version->is_string() || version->as_string() != "2.0" || !id_ok) {
    send_error(reply_id, error_code::kInvalidRequest,
               !id_ok ? "Invalid request: id must be a string, a number or null"
                      : "Invalid request: \"jsonrpc\" must be \"2.0\"");
    return;
  }
  auto* method = obj.if_contains("method");
  if (!method) {
    if (id && (obj.contains("result") || obj.contains("error"))) {
      dispatch_response(obj);
    } else {
      send_error(reply_id, error_code::kInvalidRequest,
                 "Invalid request: no \"method\", and not a response");
    }
    return;
  }
  if (!method->is_string()) {
    send_error(reply_id, error_code::kInvalidRequest, "Invalid request: \"method\" must be a string");
    return;
  }
  std::string name(method->as_string());
  // if_contains, not operator[]: the non-const operator[] may rehash and invalidate `id`. The
  // params are moved out, not copied: they may be most of a 200 MiB message.
  json::value* params_in = obj.if_contains("params");
  json::value params = params_in ? std::move(*params_in) : json::value(nullptr);
  if (!params.is_null() && !params.is_object() && !params.is_array()) {
    if (id) send_error(reply_id, error_code::kInvalidRequest, "Invalid request: params must be an object");
    return;
  }
  if (json_rpc::is_notification(obj)) {
    handle_notification(name, std::move(params));
    return;
  }
  dispatch_request(std::move(name), *id, std::move(params));
}

void Connection::handle_notification(const std::string& name, json::value&& params) {
  if (name == methods::kCancelRequest) {
    if (params.is_object()) {
      if (auto* rid = params.as_object().if_contains("requestId")) {
        auto [b, e] = running_.equal_range(json::serialize(*rid));
        for (auto it = b; it != e; ++it) it->second->cancel();
      }
    }
    return;
  }
  auto it = notifications_.find(name);
  if (it == notifications_.end()) {
    spdlog::debug("ignoring notification {}", name);
    return;
  }
  try {
    it->second(std::move(params));
  } catch (const std::exception& e) {
    spdlog::warn("notification {} failed: {}", name, e.what());
  }
}

void Connection::dispatch_request(std::string method, json::value id, json::value params) {
  auto it = requests_.find(method);
  if (it == requests_.end()) {
    std::optional<RpcError> error;
    if (unbound_) error = unbound_(method);
    if (error) send_error(id, error->code(), error->what(), error->data());
    else send_error(id, error_code::kMethodNotFound, "Method not found: " + method);
    return;
  }
  auto cancel = std::make_shared<CancelSource>();
  auto key = json::serialize(id);
  auto running_it = running_.emplace(key, cancel);
  ++in_flight_;
  RequestHandler handler = it->second;
  spdlog::debug("--> {}({})", method, key);
  asio::co_spawn(
      executor_,
      [this, handler, method = std::move(method), id = std::move(id), params = std::move(params),
       cancel, running_it]() mutable -> awaitable<void> {
        const auto started = std::chrono::steady_clock::now();
        std::optional<json::value> result;
        std::optional<RpcError> error;
        try {
          // Named, not a temporary inside co_await: GCC 12 destroys such temporaries twice.
          RequestContext ctx{id, cancel};
          result = co_await handler(std::move(params), std::move(ctx));
        } catch (const RpcError& e) {
          error = e;
        } catch (const std::exception& e) {
          spdlog::error("request {} failed: {}", method, e.what());
          error = RpcError(error_code::kInternalError, std::string("Internal error: ") + e.what());
        }
        running_.erase(running_it);
        if (error && cancel->cancelled() && error->code() == error_code::kInternalError)
          error = RpcError(error_code::kRequestCancelled, "Request cancelled");
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started).count();
        spdlog::debug("<-- {}({}) {}ms{}", method, json::serialize(id), ms, error ? " error" : "");
        if (error) send_error(id, error->code(), error->what(), error->data());
        else send_result(id, std::move(*result));
        --in_flight_;
        post_idle_if_done();
      },
      asio::detached);
}

Connection::PendingCalls::CallPtr Connection::take_pending(const json::value& id) {
  std::int64_t key = id.is_int64() ? id.as_int64() : id.is_uint64() ? static_cast<std::int64_t>(id.as_uint64()) : -1;
  auto call = pending_.take(key);
  if (!call) spdlog::debug("reply to unknown or abandoned call {}", json::serialize(id));
  return call;
}

void Connection::fail_call(const json::value& id, RpcError error) {
  auto call = take_pending(id);
  if (!call) return;
  call->error = std::move(error);
  call->resolve();
}

void Connection::dispatch_response(json::object& msg) {
  auto call = take_pending(msg.at("id"));
  if (!call) return;
  if (auto* err = msg.if_contains("error"); err && err->is_object()) {
    call->error = RpcError(json_rpc::error_from(*err));
  } else if (auto* result = msg.if_contains("result")) {
    // Moved, not copied: an editor's answer may be a 200 MiB file (a copy made it 3x at peak).
    call->result = std::move(*result);
  }
  call->resolve();
}

awaitable<json::value> Connection::call(std::string method, json::object params, CancelSource* cancel) {
  if (closed_) throw RpcError(error_code::kInternalError, "The client has disconnected");
  auto [id, pending] = pending_.add();
  send_object(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  CancelSource::Registration reg;
  if (cancel) {
    reg = cancel->on_cancel([this, id = id, pending = pending] {
      if (pending->done()) return;
      pending_.erase(id);
      notify(methods::kCancelRequest, json::object{{"requestId", id}});
      pending->error = RpcError(error_code::kRequestCancelled, "Request cancelled");
      pending->resolve();
    });
  }
  co_await pending->wait();
  if (pending->error) throw *pending->error;
  co_return std::move(pending->result);
}

void Connection::close() {
  detach();
  // A copy: each request takes itself off running_ when it ends (here, or later).
  std::vector<CancelSourcePtr> running;
  for (auto& [_, c] : running_) running.push_back(c);
  for (auto& c : running) c->cancel();
}

void Connection::detach() {
  if (closed_) return;
  closed_ = true;
  pending_.fail_all(RpcError(error_code::kInternalError, "The client has disconnected"));
  post_idle_if_done();
}

void Connection::on_idle(std::function<void()> handler) {
  idle_ = std::move(handler);
  post_idle_if_done();
}

void Connection::post_idle_if_done() {
  // Posted: the request's coroutine ends before the owner may free this connection.
  if (closed_ && in_flight_ == 0 && idle_) asio::post(executor_, idle_);
}

}  // namespace acp
