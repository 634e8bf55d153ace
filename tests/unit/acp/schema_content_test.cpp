// acp/schema ContentBlock: each kind round-trips, unknown fields are ignored, bad input names its path.
#include "acp/schema/content.hpp"

#include "schema_test_util.hpp"

namespace {

using namespace acp::schema;
using schema_test::decode;
using schema_test::decode_error;
namespace json = boost::json;

TEST(SchemaContent, EachKindRoundTrips) {
  const char* blocks[] = {
      R"({"type":"text","text":"hello","annotations":{"priority":1},"_meta":{"k":"v"}})",
      R"({"type":"image","data":"AAAA","mimeType":"image/png","uri":"file:///a.png"})",
      R"({"type":"audio","data":"BBBB","mimeType":"audio/wav"})",
      R"({"type":"resource_link","uri":"file:///a.txt","name":"a.txt","title":"A","description":"d","mimeType":"text/plain","size":12})",
      R"({"type":"resource","resource":{"uri":"file:///b.txt","mimeType":"text/plain","text":"body"}})",
      R"({"type":"resource","resource":{"uri":"file:///c.bin","blob":"CCCC"}})",
  };
  for (const char* text : blocks) {
    auto block = decode<ContentBlock>(text);
    EXPECT_EQ(json::value_from(block), json::parse(text)) << "the block encodes back to what was decoded";
    schema_test::round_trip(block);
  }
}

TEST(SchemaContent, DecodesTypedFields) {
  auto link = decode<ContentBlock>(R"({"type":"resource_link","uri":"mcp://x","name":"x"})");
  ASSERT_TRUE(std::holds_alternative<ResourceLink>(link.value));
  EXPECT_EQ(std::get<ResourceLink>(link.value).uri, "mcp://x");
  EXPECT_STREQ(link.type(), "resource_link");
  auto res = decode<ContentBlock>(R"({"type":"resource","resource":{"uri":"u","text":"t"}})");
  EXPECT_EQ(std::get<EmbeddedResource>(res.value).resource.text, "t");
}

TEST(SchemaContent, UnknownFieldsAreIgnored) {
  auto b = decode<ContentBlock>(R"({"type":"text","text":"hi","futureField":[1,2],"_meta":"not an object"})");
  EXPECT_EQ(std::get<TextContent>(b.value).text, "hi");
  EXPECT_FALSE(std::get<TextContent>(b.value).meta) << "a malformed _meta reads as absent (default on error)";
  EXPECT_EQ(json::value_from(b), json::parse(R"({"type":"text","text":"hi"})"));
}

TEST(SchemaContent, BadInputNamesItsPath) {
  EXPECT_EQ(decode_error<ContentBlock>(R"({"type":"text","text":42})"), "Invalid params: text must be a string");
  EXPECT_EQ(decode_error<ContentBlock>(R"({"type":"text"})"), "Invalid params: text is required");
  EXPECT_EQ(decode_error<ContentBlock>(R"({"type":"video"})"), "Invalid params: type 'video' is not supported");
  EXPECT_EQ(decode_error<ContentBlock>(R"({"text":"x"})"), "Invalid params: type is required");
  EXPECT_EQ(decode_error<ContentBlock>(R"({"type":"image","data":"AAAA"})"), "Invalid params: mimeType is required");
  EXPECT_EQ(decode_error<ContentBlock>(R"({"type":"resource","resource":{"uri":"u"}})"),
            "Invalid params: resource must hold `text` or `blob`");
  EXPECT_EQ(decode_error<ContentBlock>(R"({"type":"resource_link","uri":"u","name":"n","size":"big"})"),
            "Invalid params: size must be an integer");
  EXPECT_EQ(decode_error<ContentBlock>(R"("text")"), "Invalid params: params must be an object");
}

}  // namespace
