#pragma once
// The Streamable HTTP profile of ACP over the network, answered as the ACP TypeScript SDK's
// AcpServer answers (its client transport must work against it):
//   POST initialize (no Acp-Connection-Id)  -> 200, the response, and a new Acp-Connection-Id;
//   POST anything else (with the id)        -> 202; what the agent sends arrives on a GET stream;
//   GET, Accept: text/event-stream          -> the connection's stream (SSE, one message per
//       event), or with Acp-Session-Id that session's stream: the agent's requests and
//       notifications carrying a sessionId, and the replies to requests POSTed for a session,
//       go there (buffered until the client opens it); everything else to the connection's;
//   DELETE                                  -> 202, the streams end, the id is unknown after (404);
//   a JSON array (a batch)                  -> 400 with a -32600 error.
// The bearer token and the path are checked before a request gets here (network_server.cpp).
// A connection with no event stream open and no request for `idle_timeout` is ended as by a
// DELETE: a client that went without one must not keep its state forever. An initialize while
// every connection slot is taken is answered 503.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "acp/network_limits.hpp"
#include "acp/network_streams.hpp"
#include "acp/transport.hpp"

namespace acp {

class HttpConnections {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using OnConnection = std::function<void(std::unique_ptr<Transport>, ConnectionSlot)>;

  HttpConnections(boost::asio::any_io_executor executor, OnConnection on_connection,
                  std::shared_ptr<ConnectionSlots> slots, std::chrono::steady_clock::duration idle_timeout);
  ~HttpConnections();

  // Answers one request on `stream` (PlainStream or TlsStream). Returns whether the TCP
  // connection may carry another one (a GET's event stream ends it).
  template <class Stream>
  boost::asio::awaitable<bool> handle(Stream& stream, Request req);
  // Ends every connection's streams (the server stops).
  void close_all();

  struct State;

 private:
  template <class Stream>
  boost::asio::awaitable<bool> post(Stream& stream, const Request& req);
  template <class Stream>
  boost::asio::awaitable<bool> get(Stream& stream, const Request& req);
  bool remove(const std::string& id);
  boost::asio::awaitable<void> end_when_idle(std::shared_ptr<State> state);

  boost::asio::any_io_executor executor_;
  OnConnection on_connection_;
  std::shared_ptr<ConnectionSlots> slots_;
  std::chrono::steady_clock::duration idle_timeout_;
  std::map<std::string, std::shared_ptr<State>> connections_;
};

}  // namespace acp
