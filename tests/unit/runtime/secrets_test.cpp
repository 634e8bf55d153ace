// redact_secrets: whole keys and long prefixes of them (issue 40 item 10). The set of remembered
// keys is process-wide and only grows, so each test registers keys of its own.
#include "runtime/config/secrets.hpp"

#include <gtest/gtest.h>

#include <string>

namespace runtime::config {
namespace {

TEST(Secrets, WholeKeyIsRedacted) {
  const std::string key = "sk-TESTSECRET-whole-0123456789abcdefghij";
  remember_secret(key);
  EXPECT_EQ(redact_secrets("key " + key + " end"), "key [redacted] end");
}

// The sweep's case: a 401 body echoing the 38-character key and its first 20 characters.
TEST(Secrets, TwentyCharacterPrefixOfAnEchoedKeyIsRedacted) {
  const std::string key = "sk-TESTSECRET-rel3-0123456789abcdefghi";
  ASSERT_EQ(key.size(), 38u);
  remember_secret(key);
  const std::string body = "Incorrect API key provided: " + key + ". Also " + key.substr(0, 20);
  EXPECT_EQ(redact_secrets(body), "Incorrect API key provided: [redacted]. Also [redacted]");
}

TEST(Secrets, PrefixOfALongKeyIsRedactedFromTwentyCharactersOn) {
  std::string key = "sk-ant-api03-";
  key += std::string(95, 'Q');
  remember_secret(key);
  EXPECT_EQ(redact_secrets("got " + key.substr(0, 20) + "..."), "got [redacted]...");
  EXPECT_EQ(redact_secrets("got " + key.substr(0, 60)), "got [redacted]");
  // 19 characters: the public scheme and 6 more of 95; left as it is.
  EXPECT_EQ(redact_secrets("got " + key.substr(0, 19)), "got " + key.substr(0, 19));
}

TEST(Secrets, PrefixIsRedactedUpToWhereTheTextLeavesTheKey) {
  const std::string key = "zzPREFIXKEY-abcdefghijklmnopqrstu";
  remember_secret(key);
  // The first 22 characters of the key, then other text: only the key's part goes.
  EXPECT_EQ(redact_secrets(key.substr(0, 22) + "XYZ rest"), "[redacted]XYZ rest");
}

TEST(Secrets, ShortKeysNeedTwelveCharactersOrTheWholeKey) {
  EXPECT_EQ(shortest_redacted_prefix(8), 8u);    // whole key only
  EXPECT_EQ(shortest_redacted_prefix(12), 12u);  // whole key only
  EXPECT_EQ(shortest_redacted_prefix(16), 12u);  // half would be 8: too short to say anything
  EXPECT_EQ(shortest_redacted_prefix(30), 15u);  // half
  EXPECT_EQ(shortest_redacted_prefix(38), 19u);
  EXPECT_EQ(shortest_redacted_prefix(164), 20u);  // at most 20

  const std::string key = "shortkey0123456";  // 15 characters
  remember_secret(key);
  EXPECT_EQ(redact_secrets("a " + key.substr(0, 11) + " b"), "a " + key.substr(0, 11) + " b");
  EXPECT_EQ(redact_secrets("a " + key.substr(0, 12) + " b"), "a [redacted] b");
}

TEST(Secrets, TextWithoutKeysIsUnchanged) {
  remember_secret("sk-TESTSECRET-untouched-0123456789");
  const std::string text = "sk-TESTSECRE is not enough, nor is sk-proj- alone";
  EXPECT_EQ(redact_secrets(text), text);
}

TEST(Secrets, EveryOccurrenceIsRedacted) {
  const std::string key = "sk-TESTSECRET-many-0123456789abcdefghi";
  remember_secret(key);
  const std::string p = key.substr(0, 25);
  EXPECT_EQ(redact_secrets(p + p + " " + key + p), "[redacted][redacted] [redacted][redacted]");
}

}  // namespace
}  // namespace runtime::config
