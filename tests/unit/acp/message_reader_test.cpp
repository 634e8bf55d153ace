// Incoming messages: framing, incremental parsing, and what is reported about a line that
// cannot be used (its id, when it was read).
#include "acp/message_reader.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

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

}  // namespace
