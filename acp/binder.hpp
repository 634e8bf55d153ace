#pragma once
// Typed handlers on a Connection (clangd's LSPBinder): a handler is a member
//   awaitable<Resp> new_session(NewSessionRequest)            or
//   awaitable<Resp> prompt(PromptRequest, RequestContext)      (the cancel and the id)
// bound by `binder.method(methods::kSessionNew, this, &Agent::new_session)`; the binder decodes
// the params (acp::schema: a wrong field is -32602 naming its JSON path) and encodes the answer
// (boost::json::value_from). A notification is `void cancel(CancelNotification)`; a decode error
// there is logged and dropped (a notification has no answer).
//
// Init gating by construction: until `initialized()`, every request that is not bound (all but
// `initialize`, which the agent binds first) is answered "not initialized"; after it, an unbound
// method is "method not found".
#include <boost/json.hpp>
#include <string>
#include <utility>

#include "acp/connection.hpp"
#include "acp/schema/reader.hpp"

namespace acp {

// An answer with no fields: `{}`.
struct EmptyResponse {};
inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const EmptyResponse&) {
  jv = boost::json::object(jv.storage());
}
// Params that are not read (logout, auth/status).
struct NoParams {};
inline void read(const schema::Reader&, NoParams&) {}

class Binder {
 public:
  explicit Binder(Connection& conn);
  Binder(const Binder&) = delete;
  Binder& operator=(const Binder&) = delete;

  // The client has initialized: unbound methods are "method not found" from now on.
  void initialized() { initialized_ = true; }
  bool is_initialized() const { return initialized_; }

  template <class Req, class Resp, class T>
  void method(const char* name, T* self, awaitable<Resp> (T::*fn)(Req)) {
    conn_.on_request(name, [self, fn](boost::json::value params, RequestContext) -> awaitable<boost::json::value> {
      Req req = schema::decode<Req>(params);
      Resp resp = co_await (self->*fn)(std::move(req));
      co_return boost::json::value_from(resp);
    });
  }

  template <class Req, class Resp, class T>
  void method(const char* name, T* self, awaitable<Resp> (T::*fn)(Req, RequestContext)) {
    conn_.on_request(name, [self, fn](boost::json::value params, RequestContext ctx) -> awaitable<boost::json::value> {
      Req req = schema::decode<Req>(params);
      Resp resp = co_await (self->*fn)(std::move(req), std::move(ctx));
      co_return boost::json::value_from(resp);
    });
  }

  // The same decoded in two steps: `Head` (a few small fields) first, checked by `check`, which
  // throws to refuse the request, then the whole `Req`. A request its head refuses never copies
  // its bulk: session/prompt to an unknown session with a 200 MiB prompt is answered -32002 at
  // the size of the line, as before the prompt was typed. The params are let go once decoded.
  template <class Head, class Req, class Resp, class T>
  void method(const char* name, T* self, void (T::*check)(const Head&), awaitable<Resp> (T::*fn)(Req, RequestContext)) {
    conn_.on_request(name, [self, check, fn](boost::json::value params, RequestContext ctx) -> awaitable<boost::json::value> {
      (self->*check)(schema::decode<Head>(params));
      Req req = schema::decode<Req>(params);
      params = nullptr;
      Resp resp = co_await (self->*fn)(std::move(req), std::move(ctx));
      co_return boost::json::value_from(resp);
    });
  }

  template <class P, class T>
  void notification(const char* name, T* self, void (T::*fn)(P)) {
    conn_.on_notification(name, [self, fn](boost::json::value params) { (self->*fn)(schema::decode<P>(params)); });
  }

 private:
  Connection& conn_;
  bool initialized_ = false;
};

// A typed notification to the peer (clangd's OutgoingNotification<P>).
template <class P>
class OutgoingNotification {
 public:
  OutgoingNotification(Connection& conn, const char* method) : conn_(conn), method_(method) {}
  void operator()(const P& params) const { conn_.notify(method_, boost::json::value_from(params).as_object()); }

 private:
  Connection& conn_;
  const char* method_;
};

}  // namespace acp
