// A prompt's ACP content blocks -> the engine's UserPrompt -> the model's message and the
// journal's record. The record equals the blocks the editor sent (for the fields ACP defines), so
// journals written before the prompt was typed and after it replay the same.
#include "runtime/server/content_blocks.hpp"

#include <gtest/gtest.h>

#include "acp/schema/prompt.hpp"
#include "runtime/sessions/prompt_record.hpp"

namespace {

namespace json = boost::json;
using runtime::UserPrompt;
using runtime::server::user_prompt_from;

UserPrompt prompt_of(const char* blocks) {
  return user_prompt_from(acp::schema::Reader(json::parse(blocks), "prompt").as<std::vector<acp::schema::ContentBlock>>());
}

constexpr const char* kEveryKind = R"([
  {"type":"text","text":"look at"},
  {"type":"image","mimeType":"image/png","data":"AAAA"},
  {"type":"resource_link","uri":"file:///w/a.txt","name":"a.txt"},
  {"type":"resource","resource":{"uri":"file:///w/b.txt","mimeType":"text/plain","text":"B body"}},
  {"type":"resource","resource":{"uri":"file:///w/c.bin","blob":"CCCC"}},
  {"type":"audio","mimeType":"audio/wav","data":"DDDD"}
])";

TEST(UserPromptFromBlocks, TheModelGetsTextContextLinksAndImages) {
  auto message = runtime::user_message_from(prompt_of(kEveryKind));
  EXPECT_EQ(message.role, runtime::Message::Role::User);
  EXPECT_EQ(message.text,
            "look at\n"
            "[@a.txt](file:///w/a.txt)\n"
            "<context ref=\"file:///w/b.txt\">\nB body\n</context>\n"
            "[@file:///w/c.bin](file:///w/c.bin) (binary content not shown)\n"
            "(an audio clip was attached; this agent cannot hear audio)");
  ASSERT_EQ(message.images.size(), 1u);
  EXPECT_EQ(message.images[0].mime_type, "image/png");
  EXPECT_EQ(message.images[0].data_base64, "AAAA");
}

TEST(UserPromptFromBlocks, LinksKeepTheirUri) {
  auto prompt = prompt_of(R"([{"type":"resource_link","uri":"mcp://docs/x","name":"x","mimeType":"text/markdown"}])");
  ASSERT_EQ(prompt.parts.size(), 1u);
  const auto& link = std::get<UserPrompt::ResourceLink>(prompt.parts[0]);
  EXPECT_EQ(link.uri, "mcp://docs/x");
  EXPECT_EQ(link.mime_type, "text/markdown");
}

TEST(UserPromptFromBlocks, TheJournalRecordIsTheBlocksAsSent) {
  EXPECT_EQ(json::value(runtime::sessions::prompt_record(prompt_of(kEveryKind))), json::parse(kEveryKind))
      << "what the journal writes for a prompt is what it wrote when it kept the editor's blocks";
}

}  // namespace
