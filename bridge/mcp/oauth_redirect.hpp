#pragma once
// The loopback redirect listener of an OAuth sign-in (RFC 8252 §7.3): listens on 127.0.0.1,
// answers the browser's GET /callback with a short page, and hands over the code when the
// `state` matches. Other requests get 404/400 and the wait goes on.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <string>

#include "support/cancellation.hpp"

namespace bridge::mcp::oauth {

class RedirectListener {
 public:
  // Binds 127.0.0.1:port (0: any free port); throws OAuthError when it cannot.
  RedirectListener(boost::asio::any_io_executor ex, int port);
  std::string redirect_uri() const;  // http://127.0.0.1:<port>/callback

  // The authorization code of the redirect carrying `state`. Throws OAuthError when the
  // server answered with an error, McpError Cancelled / Timeout otherwise.
  boost::asio::awaitable<std::string> wait_for_code(const std::string& state, support::CancelSource* cancel,
                                                    std::chrono::seconds timeout, const std::string& server_id);

 private:
  boost::asio::ip::tcp::acceptor acceptor_;
};

}  // namespace bridge::mcp::oauth
