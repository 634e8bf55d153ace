// What we send as JSON (to the editor, MCP servers, the model, the journal) must be UTF-8 whatever
// files and commands produce: repair_utf8 replaces what is not with U+FFFD and keeps the rest.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <string>

#include "support/text.hpp"

namespace {

const std::string kReplacement = "\xEF\xBF\xBD";

std::string repaired(std::string s) {
  support::repair_utf8(s);
  return s;
}

TEST(RepairUtf8, ValidTextIsLeftAloneAndReportedUnchanged) {
  for (std::string s : {std::string(), std::string("plain ascii"), std::string("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
                        std::string("\xF4\x8F\xBF\xBF"), std::string("nul\0inside", 10)}) {
    const std::string before = s;
    EXPECT_FALSE(support::repair_utf8(s)) << "valid UTF-8 must be reported unchanged: " << before;
    EXPECT_EQ(s, before) << "valid UTF-8 must not be altered";
  }
}

TEST(RepairUtf8, EachIllFormedByteBecomesOneReplacementCharacter) {
  struct Case {
    std::string in, out, what;
  } cases[] = {
      {"caf\xE9!", "caf" + kReplacement + "!", "a Latin-1 byte"},
      {"\xC3", kReplacement, "a sequence cut at the end"},
      {"\xC3(", kReplacement + "(", "a lead byte without its continuation"},
      {"\x80x", kReplacement + "x", "a stray continuation byte"},
      {"\xC0\xAF", kReplacement + kReplacement, "an overlong '/'"},
      {"\xE0\x80\xAF", kReplacement + kReplacement + kReplacement, "an overlong 3-byte form"},
      {"\xED\xA0\x80", kReplacement + kReplacement + kReplacement, "a UTF-16 surrogate"},
      {"\xF4\x90\x80\x80", kReplacement + kReplacement + kReplacement + kReplacement, "a code point past U+10FFFF"},
      {"\xFF\xFE", kReplacement + kReplacement, "bytes that never appear in UTF-8"},
      {"ok \xE2\x82\xAC then \xE9 and \xF0\x9F\x98\x80", "ok \xE2\x82\xAC then " + kReplacement + " and \xF0\x9F\x98\x80",
       "valid characters around a bad byte are kept"},
  };
  for (const auto& c : cases) {
    std::string s = c.in;
    EXPECT_TRUE(support::repair_utf8(s)) << c.what << ": must be reported as repaired";
    EXPECT_EQ(s, c.out) << c.what;
  }
}

// ASCII is skipped a word at a time: a bad byte or a valid character anywhere in or after a run of
// ASCII, at every offset within a word, is still seen.
TEST(RepairUtf8, ABadByteOrACharacterIsSeenAtEveryOffsetAfterARunOfAscii) {
  for (std::size_t at = 0; at < 24; ++at) {
    const std::string ascii(at, 'a');
    std::string bad = ascii + "\xE9" + std::string(9, 'b');
    EXPECT_TRUE(support::repair_utf8(bad)) << "a bad byte after " << at << " ASCII bytes must be repaired";
    EXPECT_EQ(bad, ascii + kReplacement + std::string(9, 'b')) << "offset " << at;
    std::string good = ascii + "\xC3\xA9" + std::string(9, 'b');
    const std::string before = good;
    EXPECT_FALSE(support::repair_utf8(good)) << "a valid character after " << at << " ASCII bytes is valid";
    EXPECT_EQ(good, before);
  }
}

TEST(RepairUtf8, ASerializedMessageWithBinaryBytesBecomesJsonAStrictParserAccepts) {
  boost::json::object msg{{"output", std::string("\x89PNG\r\n\x1A\n\xFF\xD8 binary")}};
  std::string line = boost::json::serialize(msg);
  boost::json::error_code ec;
  (void)boost::json::parse(line, ec);
  ASSERT_TRUE(ec) << "precondition: Boost.JSON writes the bytes as they are, which it then cannot read";
  support::repair_utf8(line);
  auto back = boost::json::parse(line, ec);
  ASSERT_FALSE(ec) << "after repair the line must parse: " << ec.message();
  EXPECT_EQ(back.at("output").as_string(), kReplacement + "PNG\r\n\x1A\n" + kReplacement + kReplacement + " binary");
}

}  // namespace

TEST(Utf8PrefixLength, NeverEndsInsideACharacter) {
  const std::string s = "a\xC3\xA9" "b\xE2\x82\xAC";  // a é b €
  EXPECT_EQ(support::utf8_prefix_length(s, 100), s.size());
  EXPECT_EQ(support::utf8_prefix_length(s, 1), 1u);
  EXPECT_EQ(support::utf8_prefix_length(s, 2), 1u) << "half of é is left out";
  EXPECT_EQ(support::utf8_prefix_length(s, 3), 3u);
  EXPECT_EQ(support::utf8_prefix_length(s, 5), 4u) << "a cut inside € keeps what comes before it";
  EXPECT_EQ(support::utf8_prefix_length(s, 6), 4u);
}
