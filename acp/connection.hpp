#pragma once
// JSON-RPC 2.0 over a line transport, both directions: dispatches incoming requests (each in
// its own coroutine, so many run at once) and notifications, sends notifications, and makes
// outgoing calls whose replies are matched by id. Turns RpcError into error responses; no
// other layer writes JSON-RPC envelopes.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "support/cancellation.hpp"
#include "support/pending_calls.hpp"
#include "acp/message_reader.hpp"
#include "acp/rpc_error.hpp"
#include "acp/transport.hpp"

namespace acp {

template <class T>
using awaitable = boost::asio::awaitable<T>;
using support::CancelSource;
using support::CancelSourcePtr;

struct RequestContext {
  boost::json::value id;
  CancelSourcePtr cancel;  // fired by $/cancel_request for this id
};

class Connection {
 public:
  using RequestHandler =
      std::function<awaitable<boost::json::value>(boost::json::value params, RequestContext ctx)>;
  using NotificationHandler = std::function<void(boost::json::value params)>;

  Connection(boost::asio::any_io_executor executor, Transport& transport);
  ~Connection();

  void on_request(std::string method, RequestHandler handler);
  void on_notification(std::string method, NotificationHandler handler);
  // Asked about a request whose method has no handler: the error to answer with, or nullopt for
  // the default "method not found" (a server answers "not initialized" for its methods before
  // `initialize` binds them).
  using UnboundMethodHandler = std::function<std::optional<RpcError>(std::string_view method)>;
  void on_unbound_method(UnboundMethodHandler handler) { unbound_ = std::move(handler); }

  // One received message (from the transport), or one whole line (tests, the fuzzer).
  void handle_message(IncomingMessage&& message);
  void handle_line(std::string_view line) { handle_message(MessageReader::parse_line(line)); }

  void notify(std::string_view method, boost::json::object params);
  // The same with the params as JSON text (an object) that `write_params` appends (about `size`
  // bytes), sent as it is: the caller checked it.
  void notify_json(std::string_view method, std::size_t size, const std::function<void(std::string&)>& write_params);
  // Sends a request and waits for its reply. Throws RpcError for an error reply, and
  // RpcError(kRequestCancelled) when `cancel` fires first (the peer is told with $/cancel_request).
  awaitable<boost::json::value> call(std::string method, boost::json::object params,
                                     CancelSource* cancel = nullptr);

  // Resumes once the peer has read most of what was sent (Transport::wait_until_writable).
  awaitable<void> wait_until_writable(CancelSource* cancel) { return transport_.wait_until_writable(cancel); }
  // What is sent while one lives is written in batches (Transport::hold_output): for bursts.
  class OutputBurst {
   public:
    explicit OutputBurst(Transport& t) : transport_(t) { transport_.hold_output(); }
    ~OutputBurst() { transport_.release_output(); }
    OutputBurst(const OutputBurst&) = delete;
    OutputBurst& operator=(const OutputBurst&) = delete;

   private:
    Transport& transport_;
  };
  OutputBurst output_burst() { return OutputBurst(transport_); }

  // The peer is gone: every outgoing call fails, every running request is cancelled.
  void close();
  // The peer is gone but what it asked for goes on (a network client may come back and load its
  // sessions): every outgoing call fails and nothing more is sent, while the requests in flight
  // run to their end, unanswered. close() later still cancels them.
  void detach();
  bool closed() const { return closed_; }
  // Requests whose handlers are still running (their coroutines hold this connection).
  std::size_t requests_in_flight() const { return in_flight_; }
  // Called (posted to the executor) each time the last request in flight of a closed or
  // detached connection ends, and at once (posted) when there is none: the connection is idle.
  void on_idle(std::function<void()> handler);

  boost::asio::any_io_executor executor() const { return executor_; }

 private:
  using PendingCalls = support::PendingCalls<boost::json::value, RpcError>;
  void handle_value(boost::json::value&& msg);
  void handle_notification(const std::string& name, boost::json::value&& params);
  void dispatch_request(std::string method, boost::json::value id, boost::json::value params);
  void dispatch_response(boost::json::object& msg);
  // The call waiting for the reply `id`, removed from pending_; null when none is.
  PendingCalls::CallPtr take_pending(const boost::json::value& id);
  void fail_call(const boost::json::value& id, RpcError error);
  void send_error(const boost::json::value& id, int code, std::string_view message,
                  const boost::json::value& data = nullptr);
  void send_result(const boost::json::value& id, boost::json::value result);
  void send_object(const boost::json::object& msg);
  void send_line(std::string line);  // one whole message, repaired to UTF-8

  boost::asio::any_io_executor executor_;
  Transport& transport_;
  std::unordered_map<std::string, RequestHandler> requests_;
  std::unordered_map<std::string, NotificationHandler> notifications_;
  UnboundMethodHandler unbound_;
  PendingCalls pending_;  // our calls to the peer, by id
  // Incoming requests in flight, by serialized id, for $/cancel_request.
  std::multimap<std::string, CancelSourcePtr> running_;
  std::size_t in_flight_ = 0;
  std::function<void()> idle_;
  void post_idle_if_done();
  bool closed_ = false;
};

}  // namespace acp
