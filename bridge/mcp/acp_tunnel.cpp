#include "bridge/mcp/acp_tunnel.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/as_tuple.hpp>
#include <spdlog/spdlog.h>

#include "acp/connection.hpp"
#include "acp/methods.hpp"
#include "bridge/mcp/errors.hpp"
#include "support/json_rpc.hpp"
#include "bridge/mcp/jsonrpc.hpp"
#include "bridge/mcp/transport.hpp"
#include "support/json_read.hpp"

namespace bridge::mcp {

namespace asio = boost::asio;
namespace json = boost::json;

AcpTunnelRouter::AcpTunnelRouter(acp::Connection& conn) : conn_(conn), alive_(std::make_shared<bool>(true)) {
  std::weak_ptr<bool> alive = alive_;
  conn_.on_notification(acp::methods::kMcpMessage, [this, alive](json::value params) {
    if (alive.lock()) handle_notification(params);
  });
}

AcpTunnelRouter::~AcpTunnelRouter() { *alive_ = false; }

std::string AcpTunnelRouter::request_key(const std::string& server_id, const std::string& request_id) {
  return "req\x1f" + server_id + "\x1f" + request_id;
}

std::string AcpTunnelRouter::connection_key(const std::string& connection_id) { return "conn\x1f" + connection_id; }

void AcpTunnelRouter::add(const std::string& key, Listener listener) { routes_[key] = std::move(listener); }
void AcpTunnelRouter::remove(const std::string& key) { routes_.erase(key); }

void AcpTunnelRouter::handle_notification(const json::value& params) {
  const json::object* p = params.if_object();
  if (!p) return;
  auto str = [&](const char* k) { return std::string(support::str_at(*p, k)); };
  std::string key;
  if (auto cid = str("connectionId"); !cid.empty()) key = connection_key(cid);
  else key = request_key(str("serverId"), str("requestId"));
  auto method = str("method");
  auto it = routes_.find(key);
  if (it == routes_.end() || method.empty()) {
    spdlog::debug("mcp/message notification for no active request: {}", json::serialize(params));
    return;
  }
  json::object inner{{"jsonrpc", "2.0"}, {"method", method}};
  if (auto* ip = p->if_contains("params"); ip && ip->is_object()) inner["params"] = *ip;
  auto listener = it->second;
  listener(std::move(inner));
}

namespace {

class AcpTransport : public Transport {
 public:
  AcpTransport(asio::any_io_executor ex, acp::Connection& conn, AcpTunnelRouter* router, AcpSpec spec, std::string log_id)
      : ex_(std::move(ex)), conn_(conn), router_(router), spec_(std::move(spec)), log_id_(std::move(log_id)) {}
  ~AcpTransport() override { kill_now(); }

  asio::awaitable<void> start(Handlers handlers, std::chrono::milliseconds timeout) override {
    handlers_ = std::move(handlers);
    auto self = shared_from_this();
    auto cancel_ptr = std::make_shared<support::CancelSource>();
    auto timed_out_ptr = std::make_shared<bool>(false);
    asio::steady_timer timer(ex_, timeout);
    timer.async_wait([cancel_ptr, timed_out_ptr](boost::system::error_code ec) {
      if (!ec) {
        *timed_out_ptr = true;
        cancel_ptr->cancel();
      }
    });
    struct StopTimer {
      asio::steady_timer& timer;
      ~StopTimer() { timer.cancel(); }
    } stop_timer{timer};
    if (co_await probe_connectionless(*cancel_ptr, *timed_out_ptr, timeout)) co_return;
    co_await connect_tunnel(*cancel_ptr, *timed_out_ptr, timeout);
  }

  bool stateless() const override { return stateless_; }

  void send(json::object message) override {
    if (stopped_) {
      if (support::json_rpc::is_request(message)) post_deliver(error_response(message.at("id"), -32000, "the MCP connection is closed"));
      return;
    }
    std::string method;
    if (auto* m = message.if_contains("method"); m && m->is_string()) method = std::string(m->as_string());
    json::object params;
    if (auto* p = message.if_contains("params"); p && p->is_object()) params = std::move(p->as_object());  // not copied: the message is ours
    if (support::json_rpc::is_request(message)) {
      auto self = std::static_pointer_cast<AcpTransport>(shared_from_this());
      asio::co_spawn(ex_,
                     [self, id = std::move(message.at("id")), method = std::move(method), params = std::move(params)]() mutable {
                       return self->forward(std::move(id), std::move(method), std::move(params));
                     },
                     asio::detached);
      return;
    }
    if (method == "notifications/cancelled") {
      if (auto* rid = params.if_contains("requestId")) {
        auto it = inflight_.find(json::serialize(*rid));
        if (it != inflight_.end()) it->second->cancel();  // sends $/cancel_request
      }
      if (stateless_) return;
    }
    if (stateless_ || method.empty()) return;  // no channel for other notifications / responses
    json::object n;
    n["connectionId"] = connection_id_;
    n["method"] = method;
    if (!params.empty()) n["params"] = std::move(params);
    conn_.notify(acp::methods::kMcpMessage, std::move(n));
  }

  asio::awaitable<void> close() override {
    if (stopped_) co_return;
    auto self = shared_from_this();
    stop();
    if (!connection_id_.empty() && !conn_.closed()) {
      auto cancel_ptr = std::make_shared<support::CancelSource>();
      support::CancelSource& cancel = *cancel_ptr;
      asio::steady_timer timer(ex_, std::chrono::seconds(2));
      timer.async_wait([cancel_ptr](boost::system::error_code ec) {
        if (!ec) cancel_ptr->cancel();
      });
      try {
        json::object params;
        params["connectionId"] = connection_id_;
        std::string method = acp::methods::kMcpDisconnect;
        co_await conn_.call(std::move(method), std::move(params), &cancel);
      } catch (const acp::RpcError& e) {
        spdlog::debug("mcp {}: mcp/disconnect: {}", log_id_, e.what());
      }
      timer.cancel();
    }
  }

  void kill_now() override { stop(); }

  std::string describe() const override { return "acp " + spec_.server_id; }

 private:
  // The connectionless form, probed with a ping: true when the editor takes it; false when it
  // does not know mcp/message (then the older form is tried).
  asio::awaitable<bool> probe_connectionless(support::CancelSource& cancel, const bool& timed_out,
                                             std::chrono::milliseconds timeout) {
    json::object probe = envelope("ping", json::object{}, next_request_id());
    bool refused = false;
    try {
      std::string method = acp::methods::kMcpMessage;
      co_await conn_.call(std::move(method), std::move(probe), &cancel);
    } catch (const acp::RpcError& e) {
      if (timed_out)
        throw McpError(McpError::Kind::Timeout, "the editor did not answer mcp/message within " +
                                                    std::to_string(timeout.count()) + " ms");
      if (e.code() != acp::error_code::kMethodNotFound)
        throw McpError(McpError::Kind::Transport,
                       "the editor could not reach its MCP server " + spec_.server_id + ": " + e.what() + " (" +
                           std::to_string(e.code()) + ")");
      refused = true;
    }
    if (refused) co_return false;
    stateless_ = true;
    spdlog::debug("mcp {}: MCP-over-ACP (connectionless, {})", log_id_, "2026-07-28");
    co_return true;
  }

  // The older connect/message/disconnect form: mcp/connect gives the connection id that the
  // editor's messages are routed by.
  asio::awaitable<void> connect_tunnel(support::CancelSource& cancel, const bool& timed_out,
                                       std::chrono::milliseconds timeout) {
    json::value r;
    try {
      json::object params;
      params["serverId"] = spec_.server_id;
      params["acpId"] = spec_.server_id;
      std::string method = acp::methods::kMcpConnect;
      r = co_await conn_.call(std::move(method), std::move(params), &cancel);
    } catch (const acp::RpcError& e) {
      if (timed_out)
        throw McpError(McpError::Kind::Timeout, "the editor did not answer mcp/connect within " +
                                                    std::to_string(timeout.count()) + " ms");
      throw McpError(McpError::Kind::Transport,
                     "the editor could not connect its MCP server " + spec_.server_id + ": " + e.what());
    }
    const json::value* cid = r.is_object() ? r.as_object().if_contains("connectionId") : nullptr;
    if (!cid || !cid->is_string())
      throw McpError(McpError::Kind::Protocol, "mcp/connect answered without a connectionId");
    connection_id_ = std::string(cid->as_string());
    if (router_) {
      std::weak_ptr<Transport> weak = shared_from_this();
      router_->add(AcpTunnelRouter::connection_key(connection_id_), [this, weak](json::object n) {
        if (weak.lock()) deliver(std::move(n));
      });
    }
    spdlog::debug("mcp {}: MCP-over-ACP (mcp/connect, connection {})", log_id_, connection_id_);
  }

  void stop() {
    if (stopped_) return;
    stopped_ = true;
    handlers_ = {};
    auto inflight = std::move(inflight_);
    inflight_.clear();
    for (auto& [_, c] : inflight) c->cancel();
    if (router_ && !connection_id_.empty()) router_->remove(AcpTunnelRouter::connection_key(connection_id_));
  }

  std::string next_request_id() {
    if (router_) return router_->next_request_id();
    return "openvaala-" + std::to_string(++request_counter_);
  }

  json::object envelope(const std::string& method, json::object params, const std::string& request_id) {
    json::object meta;
    if (auto* m = params.if_contains("_meta"); m && m->is_object()) meta = m->as_object();
    if (!meta.contains(kMetaProtocolVersion)) meta[kMetaProtocolVersion] = "2026-07-28";
    if (!meta.contains(kMetaClientCapabilities)) meta[kMetaClientCapabilities] = json::object{};
    if (!meta.contains(kMetaClientInfo))
      meta[kMetaClientInfo] = json::object{{"name", "openvaala"}, {"version", OPENVAALA_VERSION}};
    params["_meta"] = std::move(meta);
    json::object env;
    env["serverId"] = spec_.server_id;
    env["requestId"] = request_id;
    env["method"] = method;
    env["params"] = std::move(params);
    return env;
  }

  void deliver(json::object msg) {
    if (stopped_) return;
    if (auto h = handlers_.on_message) h(std::move(msg));
  }
  void post_deliver(json::object msg) {
    auto self = std::static_pointer_cast<AcpTransport>(shared_from_this());
    asio::post(ex_, [self, msg = std::move(msg)]() mutable { self->deliver(std::move(msg)); });
  }

  asio::awaitable<void> forward(json::value id, std::string method, json::object params) {
    auto self = shared_from_this();
    const std::string id_key = json::serialize(id);
    auto cancel = std::make_shared<support::CancelSource>();
    inflight_[id_key] = cancel;
    std::string route;
    json::object outer;
    if (stateless_) {
      auto request_id = next_request_id();
      outer = envelope(method, std::move(params), request_id);
      route = AcpTunnelRouter::request_key(spec_.server_id, request_id);
      if (router_) {
        std::weak_ptr<Transport> weak = shared_from_this();
        router_->add(route, [this, weak](json::object n) {
          if (weak.lock()) deliver(std::move(n));
        });
      }
    } else {
      outer["connectionId"] = connection_id_;
      outer["method"] = method;
      if (!params.empty()) outer["params"] = std::move(params);
    }
    json::object reply;
    try {
      std::string outer_method = acp::methods::kMcpMessage;
      auto r = co_await conn_.call(std::move(outer_method), std::move(outer), cancel.get());
      if (!stateless_) {
        reply = json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(r)}};
      } else if (json::object* carrier = r.if_object(); carrier && carrier->contains("result")) {
        reply = json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(carrier->at("result"))}};  // moved, not copied
      } else if (carrier && carrier->contains("error") && carrier->at("error").is_object()) {
        auto e = support::json_rpc::error_from(carrier->at("error"));
        json::object err{{"code", e.code}, {"message", e.message}};
        if (carrier->at("error").as_object().contains("data")) err["data"] = e.data;
        reply = json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}};
      } else {
        reply = error_response(id, -32000, "the editor answered mcp/message with an invalid carrier: " + json::serialize(r).substr(0, 200));
      }
    } catch (const acp::RpcError& e) {
      reply = error_response(id, e.code() == acp::error_code::kRequestCancelled ? -32800 : -32000,
                             std::string("MCP-over-ACP: ") + e.what() + " (" + std::to_string(e.code()) + ")");
    }
    inflight_.erase(id_key);
    if (!route.empty() && router_) router_->remove(route);
    if (stopped_) co_return;
    deliver(std::move(reply));
    if (conn_.closed() && !stopped_) {
      auto handlers = std::move(handlers_);
      stop();
      if (handlers.on_closed) handlers.on_closed("the editor disconnected");
    }
  }

  asio::any_io_executor ex_;
  acp::Connection& conn_;
  AcpTunnelRouter* router_;
  AcpSpec spec_;
  std::string log_id_;
  Handlers handlers_;
  bool stateless_ = false;
  bool stopped_ = false;
  std::string connection_id_;
  std::uint64_t request_counter_ = 0;
  std::map<std::string, std::shared_ptr<support::CancelSource>> inflight_;
};

}  // namespace

std::shared_ptr<Transport> make_acp_transport(asio::any_io_executor ex, acp::Connection& conn, AcpTunnelRouter* router,
                                              AcpSpec spec, std::string log_id) {
  return std::make_shared<AcpTransport>(std::move(ex), conn, router, std::move(spec), std::move(log_id));
}

}  // namespace bridge::mcp
