#include "bridge/http/sse_decoder.hpp"

#include <gtest/gtest.h>

namespace {

using bridge::http::SseDecoder;
using bridge::http::SseEvent;

std::vector<SseEvent> decode_bytewise(std::string_view input) {
  SseDecoder d;
  std::vector<SseEvent> out;
  for (char c : input) d.feed(std::string_view(&c, 1), out);
  d.finish(out);
  return out;
}

TEST(SseDecoder, EventsWithTypesIdsAndMultilineData) {
  auto ev = decode_bytewise("event: message_start\ndata: {\"a\":1}\n\nid: 7\ndata: line1\ndata: line2\n\n");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].event, "message_start");
  EXPECT_EQ(ev[0].data, "{\"a\":1}");
  EXPECT_EQ(ev[1].id, "7");
  EXPECT_EQ(ev[1].data, "line1\nline2");
}

TEST(SseDecoder, CrLfAndCrLineEndingsCommentsAndNoSpaceAfterColon) {
  auto ev = decode_bytewise(": keep-alive\r\ndata:x\r\n\r\ndata: y\r\rretry: 500\ndata: z\n\n");
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].data, "x");
  EXPECT_EQ(ev[1].data, "y");
  EXPECT_EQ(ev[2].data, "z");
  EXPECT_EQ(ev[2].retry_ms, 500);
}

TEST(SseDecoder, ACrLfSplitAcrossTwoChunksIsOneLineEnd) {
  // A gateway may flush between the CR and the LF: the LF must not read as an empty line,
  // which would end the event early and split one multi-line event in two.
  SseDecoder d;
  std::vector<SseEvent> out;
  d.feed("data: a\r", out);
  d.feed("\ndata: b\r", out);
  d.feed("\n\r", out);
  d.feed("\n", out);
  d.finish(out);
  ASSERT_EQ(out.size(), 1u) << "a CRLF split across chunks ended the event early";
  EXPECT_EQ(out[0].data, "a\nb");
  EXPECT_EQ(decode_bytewise("data: a\r\ndata: b\r\n\r\n").size(), 1u)
      << "fed byte by byte, every CRLF is split across chunks";
}

TEST(SseDecoder, EventWithoutDataIsNotDispatchedAndTrailingEventIsAtEof) {
  auto ev = decode_bytewise("event: ping\n\ndata: [DONE]");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "[DONE]");
}

TEST(SseDecoder, ByteOrderMarkIsIgnored) {
  auto ev = decode_bytewise("\xEF\xBB\xBF" "data: a\n\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "a");
}

TEST(SseDecoder, LastEventIdIsRemembered) {
  SseDecoder d;
  std::vector<SseEvent> out;
  d.feed("id: 41\ndata: a\n\nid: 42\ndata: b\n\n", out);
  EXPECT_EQ(d.last_event_id(), "42");
}

}  // namespace
