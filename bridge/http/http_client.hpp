#pragma once
// One HTTP/1.1 request over http:// or https:// (system CA store, SNI, host name checks), with
// the response body streamed to a callback as it arrives: the transport under the model
// providers' SSE streams and MCP's HTTP transports. Beast stays out of this header.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/cancellation.hpp"

namespace bridge::http {

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // "host:port" to connect to instead of the URL's host and port (a forwarded port); the Host
  // header, TLS server name and certificate check still use the URL's host. Empty: the URL's.
  std::string connect_to;
};

struct HttpResponseHead {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  // Case-insensitive lookup; empty when absent.
  std::string header(std::string_view name) const;
};

struct StreamOptions {
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(30)};
  // Longest silence allowed between two pieces of the response.
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(5)};
  // Awaited before each read of the body: the consumer holds the stream here (nothing is read,
  // so TCP flow control slows the sender) until it can take more. The idle timeout does not run
  // meanwhile.
  std::function<boost::asio::awaitable<void>()> before_read;
};

enum class FailureKind { Connect, Timeout, Reset, Cancelled, Tls, Protocol, BadUrl };

struct HttpFailure {
  FailureKind kind;
  std::string message;
};

// Returns nullopt when the whole response was received. on_head runs once, before any on_data.
boost::asio::awaitable<std::optional<HttpFailure>> stream_request(
    const HttpRequest& request, const StreamOptions& options,
    std::function<void(const HttpResponseHead&)> on_head, std::function<void(std::string_view)> on_data,
    support::CancelSource* cancel);

}  // namespace bridge::http
