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
#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "acp/transport.hpp"

namespace acp {

class HttpConnections {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using OnConnection = std::function<void(std::unique_ptr<Transport>)>;

  HttpConnections(boost::asio::any_io_executor executor, OnConnection on_connection);
  ~HttpConnections();

  // Answers one request on `stream`. Returns whether the TCP connection may carry another one
  // (a GET's event stream ends it).
  boost::asio::awaitable<bool> handle(boost::beast::tcp_stream& stream, Request req);
  // Ends every connection's streams (the server stops).
  void close_all();

  struct State;

 private:
  boost::asio::awaitable<bool> post(boost::beast::tcp_stream& stream, const Request& req);
  boost::asio::awaitable<bool> get(boost::beast::tcp_stream& stream, const Request& req);
  bool remove(const std::string& id);

  boost::asio::any_io_executor executor_;
  OnConnection on_connection_;
  std::map<std::string, std::shared_ptr<State>> connections_;
};

}  // namespace acp
