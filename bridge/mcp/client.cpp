#include "bridge/mcp/client.hpp"

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <spdlog/spdlog.h>

#include "support/json_rpc.hpp"
#include "bridge/mcp/jsonrpc.hpp"

namespace bridge::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

bool is_supported_protocol_version(std::string_view v) {
  return v == "2025-11-25" || v == "2025-06-18" || v == "2025-03-26" || v == "2024-11-05";
}

std::string file_uri(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

Client::Client(asio::any_io_executor ex, std::shared_ptr<Transport> transport, Options options)
    : ex_(std::move(ex)),
      transport_(std::move(transport)),
      options_(std::move(options)),
      pending_(ex_, [](const std::string& what) { return McpError(McpError::Kind::Timeout, what); }) {}

Client::~Client() { kill_now(); }

asio::awaitable<void> Client::connect(std::chrono::milliseconds timeout) {
  if (state_ != State::New) throw McpError(McpError::Kind::Protocol, "connect() called twice");
  state_ = State::Connecting;
  const auto deadline = Clock::now() + timeout;
  std::weak_ptr<Client> weak = shared_from_this();
  Transport::Handlers handlers{
      [weak](json::object msg) {
        if (auto self = weak.lock()) self->on_message(std::move(msg));
      },
      [weak](std::string reason) {
        if (auto self = weak.lock()) self->on_transport_closed(std::move(reason));
      }};
  try {
    co_await transport_->start(std::move(handlers), timeout);
  } catch (const McpError&) {
    state_ = State::Closed;
    throw;
  }
  if (state_ == State::Closed) throw McpError(McpError::Kind::Closed, "the server went away while connecting: " + closed_reason_);
  if (transport_->stateless()) {
    protocol_version_ = kStatelessProtocolVersion;
    state_ = State::Ready;
    co_await discover(deadline);
    co_return;
  }
  co_await initialize(deadline, timeout);
}

// The handshake of the stateful revisions: initialize (the version negotiated, the server's
// description kept), then notifications/initialized.
asio::awaitable<void> Client::initialize(Clock::time_point deadline, std::chrono::milliseconds timeout) {
  json::object params;
  params["protocolVersion"] = kOfferedProtocolVersion;
  json::object capabilities{{"roots", json::object{{"listChanged", true}}}};
  if (options_.elicitation_capability) capabilities["elicitation"] = *options_.elicitation_capability;
  params["capabilities"] = std::move(capabilities);
  params["clientInfo"] = json::object{{"name", options_.client_name}, {"version", options_.client_version}};
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() < 1) left = std::chrono::milliseconds(1);
  json::value result;
  try {
    std::string method = "initialize";
    result = co_await request(std::move(method), std::move(params), left);
  } catch (const McpError& e) {
    state_ = State::Closed;
    transport_->kill_now();
    if (e.kind() == McpError::Kind::Timeout)
      throw McpError(McpError::Kind::Timeout, "no answer to initialize within " + std::to_string(timeout.count()) + " ms");
    throw McpError(e.kind(), std::string("initialize failed: ") + e.what(), e.code());
  }
  const json::object* r = result.if_object();
  const json::value* pv = r ? r->if_contains("protocolVersion") : nullptr;
  if (!pv || !pv->is_string() || !is_supported_protocol_version(pv->as_string())) {
    state_ = State::Closed;
    transport_->kill_now();
    throw McpError(McpError::Kind::Protocol,
                   "the server answered initialize with unsupported protocol version " +
                       (pv ? json::serialize(*pv) : std::string("(none)")) +
                       "; supported: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05");
  }
  protocol_version_ = std::string(pv->as_string());
  keep_server_description(*r);
  transport_->set_protocol_version(protocol_version_);
  notify("notifications/initialized", {});
  state_ = State::Ready;
  spdlog::debug("mcp {}: connected ({}, protocol {})", options_.log_id, json::serialize(server_info_), protocol_version_);
}

void Client::keep_server_description(const json::object& r) {
  if (auto* v = r.if_contains("serverInfo"); v && v->is_object()) server_info_ = v->as_object();
  if (auto* v = r.if_contains("capabilities"); v && v->is_object()) server_capabilities_ = v->as_object();
  if (auto* v = r.if_contains("instructions"); v && v->is_string()) instructions_ = std::string(v->as_string());
}

// The stateless revision has no initialize: server/discover says what initialize would have
// (capabilities decide whether prompts and resources are asked for, as over stdio). A provider
// that answers it with an error leaves the capabilities unknown (tools only); one that does not
// answer at all is not reachable.
asio::awaitable<void> Client::discover(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() < 1) left = std::chrono::milliseconds(1);
  json::value result;
  try {
    std::string method = "server/discover";
    result = co_await request(std::move(method), json::object{}, left);
  } catch (const McpError& e) {
    if (e.kind() == McpError::Kind::Rpc) {
      spdlog::debug("mcp {}: server/discover failed ({}): only its tools are used", options_.log_id, e.what());
      co_return;
    }
    state_ = State::Closed;
    transport_->kill_now();
    if (e.kind() == McpError::Kind::Timeout)
      throw McpError(McpError::Kind::Timeout, "no answer to server/discover within " + std::to_string(left.count()) + " ms");
    throw McpError(e.kind(), std::string("server/discover failed: ") + e.what(), e.code());
  }
  if (const json::object* r = result.if_object()) keep_server_description(*r);
  spdlog::debug("mcp {}: discovered ({}, capabilities {})", options_.log_id, json::serialize(server_info_),
                json::serialize(server_capabilities_));
}

asio::awaitable<json::value> Client::request(std::string method, json::object params, std::chrono::milliseconds timeout,
                                             support::CancelSource* cancel, ProgressFn on_progress) {
  if (state_ == State::Closed)
    throw McpError(McpError::Kind::Closed, closed_reason_.empty() ? "the MCP connection is closed" : closed_reason_);
  auto self = shared_from_this();  // keeps us alive while waiting
  auto [id, pending] =
      pending_.add(Clock::now() + timeout, method + ": no answer within " + std::to_string(timeout.count()) + " ms");
  std::string token;
  if (on_progress) {
    token = "ov-" + std::to_string(id);
    json::object meta;
    if (auto* m = params.if_contains("_meta"); m && m->is_object()) meta = m->as_object();
    meta["progressToken"] = token;
    params["_meta"] = std::move(meta);
    progress_[json::serialize(json::value(token))] = std::move(on_progress);
  }
  json::object msg{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.empty() || method == "tools/list" || method == "tools/call") msg["params"] = std::move(params);
  transport_->send(std::move(msg));

  support::CancelSource::Registration reg;
  if (cancel) {
    reg = cancel->on_cancel([pending = pending] {
      if (pending->done()) return;
      pending->error = McpError(McpError::Kind::Cancelled, "cancelled");
      pending->resolve();
    });
  }
  co_await pending->wait();
  reg.reset();
  pending_.erase(id);
  if (!token.empty()) progress_.erase(json::serialize(json::value(token)));
  if (pending->error) {
    auto kind = pending->error->kind();
    if ((kind == McpError::Kind::Timeout || kind == McpError::Kind::Cancelled) && state_ != State::Closed) {
      notify("notifications/cancelled",
             json::object{{"requestId", id}, {"reason", kind == McpError::Kind::Timeout ? "timeout" : "cancelled by the user"}});
    }
    throw *pending->error;
  }
  co_return std::move(pending->result);
}

void Client::notify(std::string method, json::object params) {
  if (state_ == State::Closed) return;
  json::object msg{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.empty()) msg["params"] = std::move(params);
  transport_->send(std::move(msg));
}

asio::awaitable<json::array> Client::list_all(std::string method, std::string key, std::chrono::milliseconds timeout,
                                              support::CancelSource* cancel) {
  json::array items;
  std::optional<std::string> cursor;
  for (int page = 0; page < 1000; ++page) {
    json::object params;
    if (cursor) params["cursor"] = *cursor;
    std::string m = method;
    auto result = co_await request(std::move(m), std::move(params), timeout, cancel);
    const json::object* r = result.if_object();
    if (!r) throw McpError(McpError::Kind::Protocol, method + ": the result is not an object");
    const json::value* list = r->if_contains(key);
    if (!list || !list->is_array()) throw McpError(McpError::Kind::Protocol, method + ": the result has no '" + key + "' array");
    for (const auto& item : list->as_array()) items.push_back(item);
    const json::value* next = r->if_contains("nextCursor");
    if (!next || !next->is_string() || next->as_string().empty()) break;
    std::string n(next->as_string());
    if (cursor && *cursor == n) {
      spdlog::warn("mcp {}: {} returned the same cursor twice; stopping", options_.log_id, method);
      break;
    }
    cursor = std::move(n);
  }
  co_return items;
}

asio::awaitable<std::vector<ToolInfo>> Client::list_tools(std::chrono::milliseconds timeout, support::CancelSource* cancel) {
  std::vector<ToolInfo> tools;
  tools_stale_ = false;
  std::string method = "tools/list", key = "tools";
  auto listed = co_await list_all(std::move(method), std::move(key), timeout, cancel);
  for (const auto& t : listed) {
    const json::object* o = t.if_object();
    if (!o) continue;
    ToolInfo info;
    if (auto* n = o->if_contains("name"); n && n->is_string()) info.name = std::string(n->as_string());
    if (info.name.empty()) {
      spdlog::warn("mcp {}: skipping a tool without a name", options_.log_id);
      continue;
    }
    if (auto* v = o->if_contains("title"); v && v->is_string()) info.title = std::string(v->as_string());
    if (auto* v = o->if_contains("description"); v && v->is_string()) info.description = std::string(v->as_string());
    if (auto* v = o->if_contains("inputSchema"); v && v->is_object()) info.input_schema = v->as_object();
    if (!info.input_schema.contains("type")) info.input_schema["type"] = "object";
    if (auto* v = o->if_contains("outputSchema")) info.output_schema = *v;
    if (auto* v = o->if_contains("annotations")) info.annotations = *v;
    tools.push_back(std::move(info));
  }
  co_return tools;
}

asio::awaitable<json::object> Client::call_tool(const std::string& name, json::object arguments,
                                                std::chrono::milliseconds timeout, support::CancelSource* cancel,
                                                ProgressFn on_progress) {
  json::object params;
  params["name"] = name;
  params["arguments"] = std::move(arguments);
  std::string method = "tools/call";
  auto result = co_await request(std::move(method), std::move(params), timeout, cancel, std::move(on_progress));
  if (!result.is_object()) throw McpError(McpError::Kind::Protocol, "tools/call: the result is not an object");
  co_return std::move(result.as_object());
}

asio::awaitable<void> Client::ping(std::chrono::milliseconds timeout) {
  std::string method = "ping";
  json::object params;
  co_await request(std::move(method), std::move(params), timeout);
}

asio::awaitable<void> Client::close() {
  if (state_ == State::Closed && !transport_) co_return;
  state_ = State::Closed;
  if (closed_reason_.empty()) closed_reason_ = "closed";
  fail_all(McpError::Kind::Closed, "the MCP connection was closed");
  auto keep = shared_from_this();
  co_await transport_->close();
}

void Client::kill_now() {
  state_ = State::Closed;
  fail_all(McpError::Kind::Closed, "the MCP connection was closed");
  if (transport_) transport_->kill_now();
}

void Client::fail_all(McpError::Kind kind, const std::string& why) { pending_.fail_all(McpError(kind, why)); }

void Client::on_transport_closed(std::string reason) {
  if (state_ == State::Closed) return;
  spdlog::warn("mcp {}: connection lost: {}", options_.log_id, reason);
  state_ = State::Closed;
  closed_reason_ = reason;
  fail_all(McpError::Kind::Closed, "the MCP server connection was lost: " + reason);
  if (options_.on_closed) options_.on_closed(reason);
}

void Client::on_message(json::object msg) {
  const json::value* method = msg.if_contains("method");
  const json::value* id = msg.if_contains("id");
  json::object params;
  if (auto* p = msg.if_contains("params"); p && p->is_object()) params = p->as_object();
  if (method && method->is_string()) {
    std::string m(method->as_string());
    if (support::json_rpc::is_request(msg)) handle_server_request(m, *id, params);
    else handle_notification(m, params);
    return;
  }
  if (id) {
    handle_response(msg);
    return;
  }
  spdlog::debug("mcp {}: ignoring a message that is neither request, notification nor response", options_.log_id);
}

void Client::handle_response(const json::object& msg) {
  const auto& id = msg.at("id");
  std::int64_t key = id.is_int64() ? id.as_int64() : id.is_uint64() ? static_cast<std::int64_t>(id.as_uint64()) : -1;
  if (id.is_string()) {  // some servers stringify ids
    try {
      key = std::stoll(std::string(id.as_string()));
    } catch (...) {
    }
  }
  auto p = pending_.take(key);
  if (!p) {
    spdlog::debug("mcp {}: reply to an unknown or abandoned request {}", options_.log_id, json::serialize(id));
    return;
  }
  if (auto* err = msg.if_contains("error"); err && !err->is_null()) {
    auto e = support::json_rpc::error_from(*err);
    p->error = McpError(McpError::Kind::Rpc, e.message, e.code);
  } else {
    p->result = msg.contains("result") ? msg.at("result") : json::value(nullptr);
  }
  p->resolve();
}

void Client::handle_server_request(const std::string& method, const json::value& id, const json::object& params) {
  auto reply = [&](json::value result) {
    transport_->send(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
  };
  auto reply_error = [&](int code, std::string message) {
    transport_->send(json::object{
        {"jsonrpc", "2.0"}, {"id", id}, {"error", json::object{{"code", code}, {"message", std::move(message)}}}});
  };
  spdlog::debug("mcp {}: server request {}", options_.log_id, method);
  if (method == "ping") return reply(json::object{});
  if (method == "roots/list") {
    json::array roots;
    if (options_.roots)
      for (const auto& r : options_.roots()) {
        json::object o{{"uri", r.uri}};
        if (!r.name.empty()) o["name"] = r.name;
        roots.push_back(std::move(o));
      }
    return reply(json::object{{"roots", std::move(roots)}});
  }
  if (method == "sampling/createMessage")
    return reply_error(-32601, "Method not found: this client does not offer sampling (no 'sampling' capability)");
  if (method == "elicitation/create") {
    // Nobody to ask: a clean decline at once, never a server left waiting.
    if (!options_.elicit) return reply(json::object{{"action", "decline"}});
    return answer_elicitation(id, params);
  }
  reply_error(-32601, "Method not found: " + method);
}

// The question goes out while other messages keep flowing; the answer is sent when it comes.
void Client::answer_elicitation(json::value id, json::object params) {
  std::weak_ptr<Client> weak = shared_from_this();
  auto ask = options_.elicit;
  asio::co_spawn(
      ex_,
      [weak, ask, id, params = std::move(params)]() mutable -> asio::awaitable<void> {
        json::object msg{{"jsonrpc", "2.0"}, {"id", id}};
        try {
          msg["result"] = co_await ask(std::move(params));
        } catch (const std::exception& e) {
          msg["error"] = json::object{{"code", -32603}, {"message", std::string("the question could not be asked: ") + e.what()}};
        }
        auto self = weak.lock();
        if (!self || self->state_ == State::Closed) co_return;
        self->transport_->send(std::move(msg));
      },
      asio::detached);
}

void Client::handle_notification(const std::string& method, const json::object& params) {
  if (method == "notifications/tools/list_changed") {
    spdlog::debug("mcp {}: the tool list changed", options_.log_id);
    tools_stale_ = true;
    if (options_.on_tools_changed) options_.on_tools_changed();
    return;
  }
  if (method == "notifications/prompts/list_changed") {
    if (options_.on_prompts_changed) options_.on_prompts_changed();
    return;
  }
  if (method == "notifications/elicitation/complete") {
    auto* id = params.if_contains("elicitationId");
    if (id && id->is_string() && options_.on_elicitation_complete) options_.on_elicitation_complete(std::string(id->as_string()));
    return;
  }
  if (method == "notifications/resources/list_changed") {
    if (options_.on_resources_changed) options_.on_resources_changed();
    return;
  }
  if (method == "notifications/progress") {
    if (auto* t = params.if_contains("progressToken")) {
      auto it = progress_.find(json::serialize(*t));
      if (it != progress_.end() && it->second) it->second(params);
    }
    return;
  }
  if (method == "notifications/message") {
    std::string level(params.contains("level") && params.at("level").is_string() ? params.at("level").as_string() : "info");
    std::string data = params.contains("data") ? json::serialize(params.at("data")) : "";
    if (level == "error" || level == "critical" || level == "alert" || level == "emergency")
      spdlog::warn("mcp {} [{}]: {}", options_.log_id, level, data);
    else
      spdlog::debug("mcp {} [{}]: {}", options_.log_id, level, data);
    return;
  }
  spdlog::debug("mcp {}: notification {} {}", options_.log_id, method, json::serialize(params));
}

}  // namespace bridge::mcp
