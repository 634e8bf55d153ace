// Incoming messages: framing, incremental parsing, and what is reported about a line that
// cannot be used (its id, when it was read).
#include "acp/message_reader.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using Problem = acp::IncomingMessage::Problem;

struct Collect : acp::MessageReader::Sink {
  std::vector<acp::IncomingMessage> got;
  void on_message(acp::IncomingMessage&& m) override { got.push_back(std::move(m)); }
};

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(MessageReader, ParsesLinesSplitAtEveryByteLikeAWholeParse) {
  const std::string input =
      "{\"a\":1,\"s\":\"h\\u00e9llo \\\"q\\\"\",\"n\":[1.5,-2,18446744073709551615,true,null]}\n"
      "\n  \r\n{\"b\":{\"c\":[]}}\r\n[1,2]";
  Collect c;
  acp::MessageReader r(c);
  for (char ch : input) r.feed(std::string_view(&ch, 1));
  r.finish();
  ASSERT_EQ(c.got.size(), 3u) << "three messages; blank lines are skipped";
  EXPECT_EQ(c.got[0].value, json::parse(R"({"a":1,"s":"héllo \"q\"","n":[1.5,-2,18446744073709551615,true,null]})"));
  EXPECT_EQ(c.got[1].value, json::parse(R"({"b":{"c":[]}})"));
  EXPECT_EQ(c.got[2].value, json::parse("[1,2]")) << "an unterminated last line is delivered at the end";
  for (const auto& m : c.got) EXPECT_EQ(m.problem, Problem::None) << m.error;
}

TEST(MessageReader, KeepsTheLastOfDuplicateKeys) {
  auto m = acp::MessageReader::parse_line(R"({"k":1,"k":2})");
  EXPECT_EQ(m.value, json::parse(R"({"k":2})"));
}

TEST(MessageReader, AcceptsRealisticNestingAndRefusesPastTheLimitWithTheId) {
  const std::string deep = nested(1000);
  auto ok = acp::MessageReader::parse_line(R"({"jsonrpc":"2.0","id":5,"method":"m","params":{"schema":)" + deep + "}}");
  EXPECT_EQ(ok.problem, Problem::None) << "1000 levels must parse: " << ok.error;

  const std::string too_deep = nested(acp::kMaxMessageDepth + 1);
  auto refused = acp::MessageReader::parse_line(R"({"jsonrpc":"2.0","id":"r-9","method":"m","params":)" + too_deep + "}");
  EXPECT_EQ(refused.problem, Problem::TooDeep);
  EXPECT_EQ(refused.reply_id, json::value("r-9")) << "the id was read before the deep part: it must be reported";
}

TEST(MessageReader, ATooDeepRequestIsAnsweredUnderAnIdWrittenAfterTheDeepPart) {
  const std::string too_deep = nested(acp::kMaxMessageDepth + 1);
  // Strings holding brackets, an escaped quote and a fake "id" must not confuse the scan.
  const std::string line = R"({"jsonrpc":"2.0","method":"m","params":{"s":[)" + too_deep +
                           R"(,"]\\\"{[",{"id":2}]},"note":"\"id\":1","id":"after-\"deep\""})";
  // Split into reads of every size, so that the scan after the refused part starts mid-read too.
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{1} << 20}) {
    Collect c;
    acp::MessageReader r(c);
    for (std::size_t i = 0; i < line.size(); i += chunk) r.feed(std::string_view(line).substr(i, chunk));
    r.finish();
    ASSERT_EQ(c.got.size(), 1u);
    EXPECT_EQ(c.got[0].problem, Problem::TooDeep);
    EXPECT_EQ(c.got[0].reply_id, json::value("after-\"deep\""))
        << "chunk " << chunk << ": the id written after the deep part must be reported";
  }
  auto numbered = acp::MessageReader::parse_line(R"({"params":)" + too_deep + R"(,"id": 42 })");
  EXPECT_EQ(numbered.reply_id, json::value(42));
  auto response = acp::MessageReader::parse_line(R"({"result":)" + too_deep + R"(,"id":7})");
  EXPECT_TRUE(response.reply_id.is_null()) << "a response's id is never answered";
  auto late_response = acp::MessageReader::parse_line(R"({"x":)" + too_deep + R"(,"id":7,"error":{}})");
  EXPECT_TRUE(late_response.reply_id.is_null()) << "an \"error\" after the deep part makes it a response";
  for (const char* bad_id : {"1.5", "[1]", "true"}) {
    auto m = acp::MessageReader::parse_line(R"({"p":)" + too_deep + R"(,"id":)" + bad_id + "}");
    EXPECT_TRUE(m.reply_id.is_null()) << "id " << bad_id << " is not a JSON-RPC id";
  }
}

TEST(MessageReader, ReportsTheIdOfABrokenRequestButNotOfABrokenResponse) {
  auto request = acp::MessageReader::parse_line(R"({"jsonrpc":"2.0","id":12,"method":"m","params":{"a":tru})");
  EXPECT_EQ(request.problem, Problem::Syntax);
  EXPECT_EQ(request.reply_id, json::value(12));
  // A response's id is one of ours: an error under it would read as the answer to our own call.
  auto response = acp::MessageReader::parse_line(R"({"jsonrpc":"2.0","id":3,"result":{"a":tru})");
  EXPECT_EQ(response.problem, Problem::Syntax);
  EXPECT_TRUE(response.reply_id.is_null());
  auto garbage = acp::MessageReader::parse_line("not json");
  EXPECT_EQ(garbage.problem, Problem::Syntax);
  EXPECT_TRUE(garbage.reply_id.is_null());
  // Found by the fuzzer: an id that is not a valid JSON-RPC id is not echoed back.
  for (const char* bad_id : {"4e99999", "1.5", "[1]", "{\"a\":1}", "true"}) {
    auto m = acp::MessageReader::parse_line(std::string(R"({"jsonrpc":"2.0","id":)") + bad_id + R"(,"method":"m","params":{"a":tru})");
    EXPECT_TRUE(m.reply_id.is_null()) << "id " << bad_id << " was echoed as " << json::serialize(m.reply_id);
  }
    auto trailing = acp::MessageReader::parse_line(R"({"id":1} {"id":2})");
  EXPECT_EQ(trailing.problem, Problem::Syntax) << "two values on one line are not one message";
}

TEST(MessageReader, AnOversizedLineIsReportedOnceWithItsIdAndTheNextLineIsRead) {
  Collect c;
  acp::MessageReader r(c, /*max_line_bytes=*/1024);
  r.feed(R"({"jsonrpc":"2.0","id":77,"method":"m","params":{"t":")");
  for (int i = 0; i < 100; ++i) r.feed(std::string(100, 'x'));
  r.feed("\"}}\n{\"jsonrpc\":\"2.0\",\"id\":78,\"method\":\"m\"}\n");
  ASSERT_EQ(c.got.size(), 2u);
  EXPECT_EQ(c.got[0].problem, Problem::TooLarge);
  EXPECT_EQ(c.got[0].reply_id, json::value(77));
  EXPECT_GT(c.got[0].bytes, 10000u);
  EXPECT_EQ(c.got[1].problem, Problem::None);
  EXPECT_EQ(c.got[1].value.at("id"), 78);
}

TEST(MessageReader, AStringSpreadOverManyReadsArrivesWhole) {
  Collect c;
  acp::MessageReader r(c);
  r.feed(R"({"t":")");
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    std::string piece(997, static_cast<char>('a' + i % 26));
    expected += piece;
    r.feed(piece);
  }
  r.feed("\"}\n");
  ASSERT_EQ(c.got.size(), 1u);
  EXPECT_EQ(c.got[0].value.at("t").as_string(), expected);
}

// Issue 40 item 9: a response over the limit still names the call it answers.
TEST(MessageReader, AnOversizedResponseReportsTheIdOfTheCallItAnswers) {
  Collect c;
  acp::MessageReader r(c, /*max_line_bytes=*/1024);
  r.feed(R"({"jsonrpc":"2.0","id":41,"result":{"content":")");
  for (int i = 0; i < 100; ++i) r.feed(std::string(100, 'x'));
  r.feed("\"}}\n");
  ASSERT_EQ(c.got.size(), 1u);
  EXPECT_EQ(c.got[0].problem, Problem::TooLarge);
  EXPECT_EQ(c.got[0].response_id, json::value(41));
  EXPECT_TRUE(c.got[0].reply_id.is_null()) << "a response's id is never answered";
}

TEST(MessageReader, ABrokenOrTooDeepResponseReportsItsIdAsAResponseId) {
  auto broken = acp::MessageReader::parse_line(R"({"jsonrpc":"2.0","id":3,"result":{"a":tru})");
  EXPECT_EQ(broken.response_id, json::value(3));
  const std::string too_deep = nested(acp::kMaxMessageDepth + 1);
  auto deep = acp::MessageReader::parse_line(R"({"id":"c-1","result":)" + too_deep + "}");
  EXPECT_EQ(deep.response_id, json::value("c-1"));
  auto id_after = acp::MessageReader::parse_line(R"({"result":)" + too_deep + R"(,"id":7})");
  EXPECT_EQ(id_after.response_id, json::value(7)) << "an id after the deep part of a response";
  EXPECT_TRUE(id_after.reply_id.is_null());
  auto request = acp::MessageReader::parse_line(R"({"jsonrpc":"2.0","id":12,"method":"m","params":{"a":tru})");
  EXPECT_TRUE(request.response_id.is_null()) << "a request's id is no call of ours";
}

// Issue 40 item 15: nothing past the limit reaches the parser, so the value it builds stops
// growing there (a 300 MiB line peaked at twice the limit). Seen from outside: what comes after
// the limit is never parsed, however the line arrives.
TEST(MessageReader, NothingPastTheLimitIsParsed) {
  const std::string head = R"({"jsonrpc":"2.0","id":5,"method":"m","params":{"t":")" + std::string(2000, 'x');
  for (std::size_t chunk : {std::size_t{1} << 20, std::size_t{1000}, std::size_t{7}}) {
    Collect c;
    acp::MessageReader r(c, /*max_line_bytes=*/1024);
    // Past the limit: the string ends, a syntax error follows, and an id that differs.
    const std::string line = head + R"("}, "id": 6, oops)" + "\n";
    for (std::size_t i = 0; i < line.size(); i += chunk) r.feed(std::string_view(line).substr(i, chunk));
    ASSERT_EQ(c.got.size(), 1u);
    EXPECT_EQ(c.got[0].problem, Problem::TooLarge) << "chunk " << chunk << ": the error past the limit was parsed";
    EXPECT_EQ(c.got[0].reply_id, json::value(5)) << "chunk " << chunk << ": the id past the limit was read";
  }
  Collect c;
  acp::MessageReader r(c, /*max_line_bytes=*/1024);
  r.feed(R"({"jsonrpc":"2.0","method":"m","params":{"t":")" + std::string(2000, 'x') + R"("},"id":9})" + "\n");
  ASSERT_EQ(c.got.size(), 1u);
  EXPECT_TRUE(c.got[0].reply_id.is_null()) << "an id written after the limit is not read";
}

TEST(MessageReader, ALineOfExactlyTheLimitIsRead) {
  const std::string line = R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"t":")" + std::string(100, 'y') + R"("}})";
  Collect c;
  acp::MessageReader r(c, line.size());
  r.feed(line + "\n" + line + "y\n");
  ASSERT_EQ(c.got.size(), 2u);
  EXPECT_EQ(c.got[0].problem, Problem::None) << c.got[0].error;
  EXPECT_EQ(c.got[1].problem, Problem::TooLarge);
}

// Strings past 1 MiB are read in parts and joined once (issue 40 item 15): the text, and what
// follows it, come out the same whatever the reads.
TEST(MessageReader, AStringOfManyMegabytesArrivesWholeWhateverTheReads) {
  std::string text = "\u00e9 ";
  for (int i = 0; text.size() < (5u << 20) + 123; ++i) text += std::to_string(i) + (i % 1000 ? "," : "\\n");
  const std::string line = R"({"jsonrpc":"2.0","id":1,"result":{"content":")" + text + R"(","after":"x"}})" + "\n";
  std::string expected = json::parse(line).at("result").at("content").as_string().c_str();
  for (std::size_t chunk : {std::size_t{65536}, std::size_t{999983}, line.size()}) {
    Collect c;
    acp::MessageReader r(c);
    for (std::size_t i = 0; i < line.size(); i += chunk) r.feed(std::string_view(line).substr(i, chunk));
    ASSERT_EQ(c.got.size(), 1u);
    ASSERT_EQ(c.got[0].problem, Problem::None) << c.got[0].error;
    EXPECT_TRUE(c.got[0].value.at("result").at("content").as_string() == expected) << "chunk " << chunk;
    EXPECT_EQ(c.got[0].value.at("result").at("after"), "x");
  }
}

// The peak resident memory since `reset_peak`, in MiB over what was resident then; nullopt where
// the kernel does not let a process reset its peak (/proc/self/clear_refs, Linux 4.0).
struct PeakMemory {
  static std::optional<double> field(const char* name) {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
      if (line.rfind(name, 0) == 0) return std::stod(line.substr(std::strlen(name))) / 1024.0;
    return std::nullopt;
  }
  bool reset_peak() {
    std::ofstream("/proc/self/clear_refs") << "5";
    base = field("VmRSS:");
    const auto hwm = field("VmHWM:");
    return base && hwm && *hwm < *base + 1;
  }
  double growth() const { return *field("VmHWM:") - *base; }
  std::optional<double> base;
};

// Issue 40 item 15: a line over the limit costs about the limit, and a long string about its size
// (they cost up to twice that while a string grown by doubling copied itself).
TEST(MessageReader, AHugeLineCostsAboutTheLimitAndALongStringAboutItsSize) {
  constexpr std::size_t kMiB = 1u << 20;
  const std::string head = R"({"jsonrpc":"2.0","id":1,"result":{"content":")";
  const std::string line = head + std::string(48 * kMiB, 'q') + "\"}}\n";
  PeakMemory mem;
  {
    Collect c;
    acp::MessageReader r(c, /*max_line_bytes=*/40 * kMiB);
    if (!mem.reset_peak()) GTEST_SKIP() << "the peak resident memory cannot be reset here";
    for (std::size_t i = 0; i < line.size(); i += 65536) r.feed(std::string_view(line).substr(i, 65536));
    ASSERT_EQ(c.got.size(), 1u);
    EXPECT_EQ(c.got[0].problem, Problem::TooLarge);
    EXPECT_LT(mem.growth(), 40 * 1.15 + 4) << "MiB at peak for a 48 MiB line refused at 40 MiB";
  }
  {
    Collect c;
    acp::MessageReader r(c);
    const std::string_view accepted = std::string_view(line).substr(0, head.size() + 40 * kMiB);
    ASSERT_TRUE(mem.reset_peak());
    for (std::size_t i = 0; i < accepted.size(); i += 65536) r.feed(accepted.substr(i, 65536));
    r.feed("\"}}\n");
    ASSERT_EQ(c.got.size(), 1u);
    EXPECT_EQ(c.got[0].value.at("result").at("content").as_string().size(), 40 * kMiB);
    EXPECT_LT(mem.growth(), 40 * 1.15 + 4) << "MiB at peak for a 40 MiB string";
  }
}

}  // namespace
