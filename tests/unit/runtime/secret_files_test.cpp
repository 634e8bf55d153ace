// The MCP OAuth tokens of mcp_tokens.json are secrets like the API keys (issue 40 R7): stored
// ones, and those read or written later, are redacted from logs and the journal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bridge/mcp/oauth_store.hpp"
#include "runtime/config/secrets.hpp"

namespace fs = std::filesystem;
using runtime::config::redact_secrets;

TEST(SecretFiles, StoredMcpTokensAreRedacted) {
  const auto root = fs::temp_directory_path() / ("ov-secret-files-" + std::to_string(::getpid()));
  fs::create_directories(root);
  const std::string access = "mcp-access-" + std::to_string(::getpid()), refresh = "mcp-refresh-" + std::to_string(::getpid());
  std::ofstream(root / "mcp_tokens.json") << R"({"servers": {"s": {"url": "https://x", "access_token": ")" << access
                                          << R"(", "refresh_token": ")" << refresh << R"("}}})";
  runtime::config::remember_configured_keys(root);
  EXPECT_EQ(redact_secrets("bearer " + access), "bearer [redacted]") << "a stored access token is a secret";
  EXPECT_EQ(redact_secrets("refresh " + refresh), "refresh [redacted]") << "a stored refresh token is a secret";

  bridge::mcp::oauth::StoredAuth later;
  later.url = "https://y";
  later.tokens.access_token = "mcp-signed-in-later-" + std::to_string(::getpid());
  bridge::mcp::oauth::TokenStore(bridge::mcp::oauth::token_file(root)).save("t", later);
  EXPECT_EQ(redact_secrets(later.tokens.access_token), "[redacted]") << "a token saved after startup is a secret too";
  fs::remove_all(root);
}
