// The browser side of `openvaala acp --listen`: the token as a WebSocket subprotocol and the
// Origin allow-list (acp/network_auth.hpp).
#include <gtest/gtest.h>

#include "acp/network_auth.hpp"

namespace {

TEST(NetworkBrowserAuth, OnlyTheExactBearerSubprotocolMatches) {
  EXPECT_TRUE(acp::subprotocol_bearer_matches("acp, acp.bearer.s3cret", "s3cret"));
  EXPECT_TRUE(acp::subprotocol_bearer_matches("acp.bearer.s3cret,acp", "s3cret"));
  EXPECT_FALSE(acp::subprotocol_bearer_matches("acp, acp.bearer.s3cre", "s3cret"));
  EXPECT_FALSE(acp::subprotocol_bearer_matches("acp, acp.bearer.s3cretX", "s3cret"));
  EXPECT_FALSE(acp::subprotocol_bearer_matches("acp, s3cret", "s3cret"));
  EXPECT_FALSE(acp::subprotocol_bearer_matches("acp, x.acp.bearer.s3cret", "s3cret"));
  EXPECT_FALSE(acp::subprotocol_bearer_matches("", "s3cret"));
  EXPECT_FALSE(acp::subprotocol_bearer_matches("acp.bearer.", "s3cret"));
  // No token configured: the subprotocol path lets nobody in by itself.
  EXPECT_FALSE(acp::subprotocol_bearer_matches("acp.bearer.", ""));
}

TEST(NetworkBrowserAuth, SubprotocolOfferIsAWholeItem) {
  EXPECT_TRUE(acp::offers_subprotocol("acp.bearer.x, acp", "acp"));
  EXPECT_TRUE(acp::offers_subprotocol("acp", "acp"));
  EXPECT_FALSE(acp::offers_subprotocol("acp.bearer.x", "acp"));
  EXPECT_FALSE(acp::offers_subprotocol("", "acp"));
}

TEST(NetworkBrowserAuth, OnlyListedOriginsAreAllowed) {
  const std::vector<std::string> allowed = {"https://editor.example:8443/", "http://localhost:3000"};
  EXPECT_TRUE(acp::origin_allowed("https://editor.example:8443", allowed));
  EXPECT_TRUE(acp::origin_allowed("HTTP://LOCALHOST:3000", allowed));
  EXPECT_FALSE(acp::origin_allowed("https://editor.example", allowed));
  EXPECT_FALSE(acp::origin_allowed("https://editor.example:8443.evil.example", allowed));
  EXPECT_FALSE(acp::origin_allowed("http://localhost:3001", allowed));
  EXPECT_FALSE(acp::origin_allowed("null", allowed));
  EXPECT_FALSE(acp::origin_allowed("", allowed));
  EXPECT_FALSE(acp::origin_allowed("https://editor.example:8443", {}));
}

}  // namespace
