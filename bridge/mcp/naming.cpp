#include "bridge/mcp/naming.hpp"

#include <openssl/sha.h>

namespace bridge::mcp {

std::string sanitize_name(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    out.push_back(ok ? c : '_');
  }
  return out;
}

std::string qualified_tool_name(std::string_view server_id, std::string_view tool) {
  std::string full = "mcp__" + std::string(server_id) + "__" + std::string(tool);
  std::string name = sanitize_name(full);
  if (name.size() <= kMaxToolNameLength) return name;
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(full.data()), full.size(), digest);
  static const char* hex = "0123456789abcdef";
  std::string h;
  for (unsigned char b : digest) {
    h.push_back(hex[b >> 4]);
    h.push_back(hex[b & 15]);
  }
  return name.substr(0, kMaxToolNameLength - h.size()) + h;
}

}  // namespace bridge::mcp
