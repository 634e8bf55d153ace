#pragma once
// Where MCP OAuth sign-ins are kept: `<config root>/mcp_tokens.json` beside credentials.yaml,
// mode 0600, one entry per MCP server id (DESIGN §4). An entry is only used for the URL it was
// made for. Nothing here logs; the file is read and written whole (atomic replace).
//
//   {"servers": {"<id>": {"url": ..., "client_id": ..., "client_secret": ..., "redirect_uri": ...,
//                         "token_endpoint": ..., "revocation_endpoint": ..., "resource": ...,
//                         "access_token": ..., "refresh_token": ..., "expires_at": <unix s>,
//                         "scope": ...}}}
#include <filesystem>
#include <optional>
#include <string>

#include "bridge/mcp/oauth.hpp"

namespace bridge::mcp::oauth {

struct StoredAuth {
  std::string url;  // the MCP server URL it was made for
  std::string client_id;
  std::string client_secret;  // from dynamic registration; empty when none (or from the YAML's env)
  bool registered = false;    // the client came from dynamic registration
  std::string redirect_uri;
  std::string token_endpoint;
  std::string revocation_endpoint;
  std::string resource;
  Tokens tokens;
};

class TokenStore {
 public:
  explicit TokenStore(std::filesystem::path file) : file_(std::move(file)) {}
  const std::filesystem::path& file() const { return file_; }

  // The entry of `server_id` when it was made for `url`; nullopt when none (or the file is
  // unreadable: a broken file means signing in again, which rewrites it).
  std::optional<StoredAuth> load(const std::string& server_id, const std::string& url) const;
  // Throws std::runtime_error naming the file (never a token).
  void save(const std::string& server_id, const StoredAuth& auth) const;
  // True when there was an entry.
  bool erase(const std::string& server_id) const;

 private:
  std::filesystem::path file_;
};

std::filesystem::path token_file(const std::filesystem::path& config_root);

}  // namespace bridge::mcp::oauth
