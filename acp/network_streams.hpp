#pragma once
// The two byte streams `openvaala acp --listen` serves on: plain TCP, and TLS over TCP
// (--tls-cert/--tls-key). The HTTP and WebSocket code is written once for both (templates
// instantiated for these two types only).
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/asio/ssl/context.hpp>
#include <string>

namespace acp {

using PlainStream = boost::beast::tcp_stream;
using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

// A TLS server context serving the PEM certificate chain at `cert_path` with the PEM private
// key at `key_path`. Throws std::runtime_error (a message for the user) when a file is missing
// or unreadable, is not PEM of its kind, or the key is not the certificate's.
boost::asio::ssl::context make_tls_context(const std::string& cert_path, const std::string& key_path);

}  // namespace acp
