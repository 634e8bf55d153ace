// What `initialize`'s clientCapabilities say the client can do.
#include <gtest/gtest.h>

#include "acp/client_api.hpp"

namespace json = boost::json;

TEST(ClientCapabilities, TerminalAuthFromAuthTerminalOrTheOlderMetaKey) {
  using acp::ClientCapabilities;
  EXPECT_FALSE(ClientCapabilities::from_json(json::parse(R"({"terminal": true})")).auth_terminal)
      << "terminal/* support is not terminal auth";
  EXPECT_TRUE(ClientCapabilities::from_json(json::parse(R"({"auth": {"terminal": true}})")).auth_terminal);
  // The ACP Registry's auth check and protocol matrix send this (Zed did before auth.terminal).
  EXPECT_TRUE(ClientCapabilities::from_json(json::parse(R"({"_meta": {"terminal-auth": true}})")).auth_terminal);
  EXPECT_FALSE(ClientCapabilities::from_json(json::parse(R"({"_meta": {"terminal-auth": false}})")).auth_terminal);
  EXPECT_FALSE(ClientCapabilities::from_json(json::parse(R"({"_meta": {"terminal_output": true}})")).auth_terminal);
}
