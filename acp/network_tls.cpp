#include <boost/asio/ssl/context.hpp>
#include <fstream>
#include <stdexcept>

#include "acp/network_streams.hpp"

namespace acp {

namespace {

void require_readable(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in || in.peek() == std::ifstream::traits_type::eof())
    throw std::runtime_error(flag + " " + path + ": cannot read it (missing, unreadable or empty)");
}

}  // namespace

boost::asio::ssl::context make_tls_context(const std::string& cert_path, const std::string& key_path) {
  namespace ssl = boost::asio::ssl;
  require_readable("--tls-cert", cert_path);
  require_readable("--tls-key", key_path);
  ssl::context ctx(ssl::context::tls_server);
  // TLS 1.2 and later only; no compression, no renegotiation-era options.
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression |
                  ssl::context::single_dh_use);
  boost::system::error_code ec;
  ctx.use_certificate_chain_file(cert_path, ec);
  if (ec) throw std::runtime_error("--tls-cert " + cert_path + ": not a PEM certificate (" + ec.message() + ")");
  ctx.use_private_key_file(key_path, ssl::context::pem, ec);
  if (ec) throw std::runtime_error("--tls-key " + key_path + ": not a PEM private key, or one that does not match --tls-cert " + cert_path + " (" + ec.message() + ")");
  if (SSL_CTX_check_private_key(ctx.native_handle()) != 1)
    throw std::runtime_error("--tls-key " + key_path + " is not the private key of --tls-cert " + cert_path);
  return ctx;
}

}  // namespace acp
