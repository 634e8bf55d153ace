#include "acp/network_auth.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace {

TEST(NetworkAuth, OnlyTheExactBearerHeaderMatches) {
  EXPECT_TRUE(acp::bearer_matches("Bearer s3cret", "s3cret"));
  EXPECT_FALSE(acp::bearer_matches("", "s3cret"));
  EXPECT_FALSE(acp::bearer_matches("Bearer s3cre", "s3cret"));
  EXPECT_FALSE(acp::bearer_matches("Bearer s3cretX", "s3cret"));
  EXPECT_FALSE(acp::bearer_matches("bearer s3cret", "s3cret"));
  EXPECT_FALSE(acp::bearer_matches("Bearer  s3cret", "s3cret"));
  EXPECT_FALSE(acp::bearer_matches("Basic s3cret", "s3cret"));
  EXPECT_FALSE(acp::bearer_matches("s3cret", "s3cret"));
  EXPECT_FALSE(acp::bearer_matches("Bearer ", "s3cret"));
  // No token configured (a loopback-only server): everyone is let in.
  EXPECT_TRUE(acp::bearer_matches("", ""));
}

std::filesystem::path token_file(const std::string& text, std::filesystem::perms perms) {
  auto path = std::filesystem::temp_directory_path() / ("ov-token-" + std::to_string(::getpid()));
  std::ofstream(path) << text;
  std::filesystem::permissions(path, perms);
  return path;
}

TEST(NetworkAuth, TokenFileIsTrimmedAndMustBeOwnerOnly) {
  using P = std::filesystem::perms;
  auto path = token_file("  tok en\n\n", P::owner_read | P::owner_write);
  EXPECT_EQ(acp::read_token_file(path.string()), "tok en");
  std::filesystem::permissions(path, P::owner_read | P::owner_write | P::group_read);
  EXPECT_THROW(acp::read_token_file(path.string()), std::runtime_error);
  std::filesystem::permissions(path, P::owner_read | P::owner_write | P::others_read);
  EXPECT_THROW(acp::read_token_file(path.string()), std::runtime_error);
  std::filesystem::remove(path);
  path = token_file(" \n", P::owner_read | P::owner_write);
  EXPECT_THROW(acp::read_token_file(path.string()), std::runtime_error);
  std::filesystem::remove(path);
  EXPECT_THROW(acp::read_token_file(path.string()), std::runtime_error);
}

TEST(NetworkAuth, ListenAddressParses) {
  auto a = acp::parse_listen_address("127.0.0.1:8765");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8765);
  a = acp::parse_listen_address("[::1]:0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "::1");
  EXPECT_FALSE(acp::parse_listen_address("::1:80"));
  EXPECT_FALSE(acp::parse_listen_address("host"));
  EXPECT_FALSE(acp::parse_listen_address("host:"));
  EXPECT_FALSE(acp::parse_listen_address("host:70000"));
  EXPECT_FALSE(acp::parse_listen_address(":80"));
}

}  // namespace
