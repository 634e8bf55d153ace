#include "support/line_framer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

struct Collect : support::LineFramer::Sink {
  std::vector<std::string> lines;
  std::vector<std::size_t> oversized;
  void on_line(std::string&& l) override { lines.push_back(std::move(l)); }
  void on_oversized_line(std::size_t n) override { oversized.push_back(n); }
};

TEST(LineFramer, SplitsLinesAcrossArbitraryChunks) {
  Collect c;
  support::LineFramer f(c);
  const std::string input = "{\"a\":1}\n{\"b\":2}\r\n{\"c\":3}\n";
  for (char ch : input) f.feed(std::string_view(&ch, 1));
  EXPECT_EQ(c.lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
}

TEST(LineFramer, SkipsBlankLinesAndDeliversUnterminatedLastLineAtEof) {
  Collect c;
  support::LineFramer f(c);
  f.feed("\n  \n{\"x\":1}\n{\"tail\":true}");
  EXPECT_EQ(c.lines.size(), 1u);
  f.finish();
  EXPECT_EQ(c.lines, (std::vector<std::string>{"{\"x\":1}", "{\"tail\":true}"}));
}

TEST(LineFramer, OversizedLineIsReportedOnceAndTheStreamResynchronises) {
  Collect c;
  support::LineFramer f(c, 10);
  f.feed("0123456789ABCDEF");
  f.feed("GHIJ\nok\n");
  EXPECT_EQ(c.oversized, (std::vector<std::size_t>{20}));
  EXPECT_EQ(c.lines, (std::vector<std::string>{"ok"}));
}

TEST(LineFramer, AcceptsLinesUpToTheLimit) {
  Collect c;
  support::LineFramer f(c, 64u * 1024 * 1024);
  std::string big(64u * 1024 * 1024 - 1, 'x');
  f.feed(big);
  f.feed("\n");
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_EQ(c.lines[0].size(), big.size());
  EXPECT_TRUE(c.oversized.empty());
}

}  // namespace

// Promise: the size limit is inclusive: a line of exactly the limit is a message, one byte more is
// reported as oversized.
TEST(LineFramer, ALineOfExactlyTheLimitIsAcceptedOneMoreIsNot) {
  Collect c;
  support::LineFramer f(c, 10);
  f.feed("0123456789\n0123456789A\nok\n");
  EXPECT_EQ(c.lines, (std::vector<std::string>{"0123456789", "ok"})) << "a 10-byte line under a 10-byte limit is accepted";
  EXPECT_EQ(c.oversized, (std::vector<std::size_t>{11}));
}
