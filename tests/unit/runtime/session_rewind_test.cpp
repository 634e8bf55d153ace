// Rewinds in the session log (_session/rewind): what the model sees next (load, load_conversation)
// and what session/load replays leave out the rewound message and everything after it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "runtime/sessions/rewinds.hpp"
#include "runtime/sessions/session_store.hpp"

namespace fs = std::filesystem;
using namespace runtime;
using namespace runtime::sessions;

namespace {

class SessionRewindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("ov-rewind-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  bool live(SessionStore& store, const std::string& id, const std::string& message_id) {
    const int fd = ::open(store.file_of(id).c_str(), O_RDONLY);
    const bool found = has_live_user_message(fd, message_id);
    ::close(fd);
    return found;
  }
  fs::path dir_;
};

Message said(Message::Role role, std::string text, std::string id = {}) {
  Message m;
  m.role = role;
  m.text = std::move(text);
  m.id = std::move(id);
  return m;
}

// Three turns: u1/a1, u2/a2, u3/a3.
SessionWriter three_turns(SessionStore& store, const std::string& id) {
  SessionWriter w = store.create(Header{id, "/work/p", "build", "default", {}});
  for (int i = 1; i <= 3; ++i) {
    const std::string n = std::to_string(i);
    w.append(UserMessage{said(Message::Role::User, "q" + n, "u" + n), {}});
    w.append(AssistantMessage{said(Message::Role::Assistant, "a" + n, "a" + n)});
    w.append(TurnEnd{"end_turn"});
  }
  return w;
}

std::vector<std::string> texts(const std::vector<Message>& conversation) {
  std::vector<std::string> out;
  for (const auto& m : conversation) out.push_back(m.text);
  return out;
}

// The user and agent texts session/load shows, in order.
std::vector<std::string> shown(const std::vector<SessionEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    if (const auto* u = std::get_if<UserContent>(&e)) out.push_back(std::string(u->block.at("text").as_string()));
    if (const auto* t = std::get_if<TextDelta>(&e)) out.push_back(t->text);
    if (const auto* j = std::get_if<JournalChunk>(&e)) out.push_back(j->json);
  }
  return out;
}

}  // namespace

TEST_F(SessionRewindTest, TheRewoundMessageAndWhatFollowsAreGoneFromConversationAndReplay) {
  SessionStore store(dir_);
  SessionWriter w = three_turns(store, "ses_r");
  w.append(Rewind{"u2"});
  w.append(UserMessage{said(Message::Role::User, "q2 again", "u4"), {}});
  w.append(AssistantMessage{said(Message::Role::Assistant, "a4", "a4")});
  w.turn_boundary();

  auto s = store.load("ses_r");
  ASSERT_TRUE(s);
  EXPECT_EQ(texts(s->conversation), (std::vector<std::string>{"q1", "a1", "q2 again", "a4"}))
      << "promise: the model no longer sees the rewound message nor what followed it";
  EXPECT_EQ(shown(s->replay->rest()), (std::vector<std::string>{"q1", "a1", "q2 again", "a4"}))
      << "promise: session/load no longer replays them";
  auto journal_text = store.open_replay("ses_r", Replay::Form::JournalText);
  EXPECT_EQ(shown(journal_text->rest()), (std::vector<std::string>{"q1", R"("a1")", "q2 again", R"("a4")"}))
      << "the replay as session/load sends it (log text) leaves them out too";
  auto summary = store.load_summary("ses_r");
  ASSERT_TRUE(summary);
  EXPECT_EQ(texts(*store.load_conversation(*summary)), (std::vector<std::string>{"q1", "a1", "q2 again", "a4"}))
      << "a session/load's conversation, read after its answer, leaves them out too";
  EXPECT_TRUE(fs::file_size(store.file_of("ses_r")) > 0);
  EXPECT_TRUE(live(store, "ses_r", "u1"));
  EXPECT_FALSE(live(store, "ses_r", "u2")) << "a rewound message cannot be rewound to again";
  EXPECT_FALSE(live(store, "ses_r", "u3"));
  EXPECT_FALSE(live(store, "ses_r", "nope"));
}

TEST_F(SessionRewindTest, ARewindBeforeACompactionGivesTheConversationBeforeIt) {
  SessionStore store(dir_);
  SessionWriter w = three_turns(store, "ses_c");
  w.append(Compaction{"all three", {}, 0, "compaction-1"});
  w.append(UserMessage{said(Message::Role::User, "q5", "u5"), {}});
  w.append(Rewind{"u3"});
  auto s = store.load("ses_c");
  EXPECT_EQ(texts(s->conversation), (std::vector<std::string>{"q1", "a1", "q2", "a2"}))
      << "promise: the compaction after the rewound message is dropped with it";
}

TEST_F(SessionRewindTest, AnIdUsedAgainAfterARewindIsRewoundWhereItIsNow) {
  SessionStore store(dir_);
  SessionWriter w = three_turns(store, "ses_again");
  w.append(Rewind{"u3"});
  w.append(UserMessage{said(Message::Role::User, "q3 edited", "u3"), {}});  // the editor resends with its id
  w.append(AssistantMessage{said(Message::Role::Assistant, "a3b", "a3b")});
  EXPECT_TRUE(live(store, "ses_again", "u3"));
  w.append(Rewind{"u3"});
  w.append(Rewind{"unknown"});  // names nothing: drops nothing
  auto s = store.load("ses_again");
  EXPECT_EQ(texts(s->conversation), (std::vector<std::string>{"q1", "a1", "q2", "a2"}));
  // A rewind further back covers the earlier ones.
  w.append(Rewind{"u1"});
  EXPECT_TRUE(store.load("ses_again")->conversation.empty());
  EXPECT_TRUE(shown(store.load("ses_again")->replay->rest()).empty());
}

TEST_F(SessionRewindTest, MessagesOfOldLogsAreRewoundByTheIdsTheirLinesGiveThem) {
  SessionStore store(dir_);
  SessionWriter w = store.create(Header{"ses_old", "/work/p", "build", "default", {}});
  w.append(UserMessage{said(Message::Role::User, "q1"), {}});       // line 2
  w.append(AssistantMessage{said(Message::Role::Assistant, "a1")});  // line 3
  w.append(UserMessage{said(Message::Role::User, "q2"), {}});       // line 4
  EXPECT_EQ(shown_message_id("", 4), "msg_line4");
  EXPECT_TRUE(live(store, "ses_old", "msg_line4"));
  w.append(Rewind{"msg_line4"});
  EXPECT_EQ(texts(store.load("ses_old")->conversation), (std::vector<std::string>{"q1", "a1"}));
}

TEST_F(SessionRewindTest, ALogWithoutRewindsDropsNothing) {
  SessionStore store(dir_);
  SessionWriter w = three_turns(store, "ses_plain");
  // The record's start inside a string is escaped: not a rewind.
  w.append(UserMessage{said(Message::Role::User, "\n{\"type\":\"rewind\",\"messageId\":\"u1\"}", "u9"), {}});
  const int fd = ::open(store.file_of("ses_plain").c_str(), O_RDONLY);
  EXPECT_TRUE(rewound_spans(fd).empty());
  ::close(fd);
  EXPECT_EQ(store.load("ses_plain")->conversation.size(), 7u);
}
