// File checkpoints (runtime/sessions/checkpoints.hpp): what a restore to before a message needs,
// changes by hand, the size bound (oldest dropped, said so) and reading the folder back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "runtime/sessions/checkpoints.hpp"
#include "support/file_io.hpp"

namespace fs = std::filesystem;
using runtime::sessions::CheckpointStore;

namespace {

class CheckpointStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("ov-checkpoints-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_ / "work");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path file(const std::string& name) { return dir_ / "work" / name; }
  void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
  // An agent's edit of `p` to `text` (nullopt: removed), checkpointed as the tools do.
  void agent_writes(CheckpointStore& store, const fs::path& p, const std::optional<std::string>& text) {
    store.before_change(p, support::read_file(p));
    if (text) write(p, *text);
    else fs::remove(p);
    store.after_change(p, text);
  }
  fs::path dir_;
};

}  // namespace

TEST_F(CheckpointStoreTest, TheFilesAsTheyWereBeforeAMessage) {
  CheckpointStore store(dir_ / "ses.checkpoints");
  write(file("a.txt"), "a0");
  store.begin_message("m1");
  agent_writes(store, file("a.txt"), "a1");
  agent_writes(store, file("a.txt"), "a1b");  // the turn's second change: its first is what counts
  store.begin_message("m2");                  // changes nothing
  store.begin_message("m3");
  agent_writes(store, file("a.txt"), "a3");
  agent_writes(store, file("new.txt"), "created");

  auto from_m1 = store.before("m1");
  ASSERT_TRUE(from_m1);
  ASSERT_EQ(from_m1->size(), 2u);
  EXPECT_EQ((*from_m1)[0].path, file("a.txt"));
  EXPECT_EQ((*from_m1)[0].content, std::optional<std::string>("a0")) << "promise: the content before the message's first change";
  EXPECT_FALSE((*from_m1)[1].content) << "promise: a file the agent created has no content before (a restore deletes it)";
  auto from_m2 = store.before("m2");
  ASSERT_TRUE(from_m2);
  EXPECT_EQ((*from_m2)[0].content, std::optional<std::string>("a1b")) << "a message that changed nothing starts where the next one does";
  EXPECT_FALSE((*from_m2)[0].changed_by_hand);
  EXPECT_FALSE(store.before("m9")) << "an unknown message has no checkpoints";

  write(file("a.txt"), "by hand");
  EXPECT_TRUE(store.before("m3")->at(0).changed_by_hand) << "promise: a change by hand since the agent's last write is seen";
  EXPECT_FALSE(store.before("m3")->at(1).changed_by_hand);
}

TEST_F(CheckpointStoreTest, TheOldestContentsAreDroppedPastTheBoundAndSaidSo) {
  CheckpointStore store(dir_ / "ses.checkpoints", 10);
  for (int i = 0; i < 4; ++i) write(file("f" + std::to_string(i)), "1234");  // 4 bytes each
  for (int i = 0; i < 4; ++i) {
    store.begin_message("m" + std::to_string(i));
    agent_writes(store, file("f" + std::to_string(i)), "x");
  }
  EXPECT_LE(store.bytes(), 10u) << "promise: the contents kept stay within the bound";
  EXPECT_EQ(store.dropped(), 2u);
  auto all = store.before("m0");
  ASSERT_EQ(all->size(), 4u);
  EXPECT_FALSE((*all)[0].available) << "promise: the oldest content is the one dropped";
  EXPECT_FALSE((*all)[1].available);
  EXPECT_TRUE((*all)[2].available);
  EXPECT_EQ((*all)[3].content, std::optional<std::string>("1234"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "ses.checkpoints" / "blobs"), fs::directory_iterator()), 2)
      << "a dropped content's file is deleted";
  // A content larger than the whole bound is not kept.
  write(file("big"), std::string(11, 'b'));
  store.begin_message("m4");
  agent_writes(store, file("big"), "small");
  EXPECT_FALSE(store.before("m4")->at(0).available);
  EXPECT_LE(store.bytes(), 10u);
}

TEST_F(CheckpointStoreTest, ASessionLoadedAgainFindsItsCheckpoints) {
  {
    CheckpointStore store(dir_ / "ses.checkpoints", 6);
    write(file("a.txt"), "old a");
    write(file("b.txt"), "old b");
    store.begin_message("m1");
    agent_writes(store, file("a.txt"), "new a");
    store.begin_message("m2");
    agent_writes(store, file("b.txt"), "new b");  // drops a's content (bound 6)
  }
  CheckpointStore again(dir_ / "ses.checkpoints", 6);
  auto all = again.before("m1");
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_FALSE((*all)[0].available);
  EXPECT_EQ((*all)[1].content, std::optional<std::string>("old b"));
  EXPECT_FALSE((*all)[1].changed_by_hand) << "the agent's last writes are read back too";
  EXPECT_EQ(again.dropped(), 1u);
  EXPECT_EQ(again.bytes(), 5u);
}

TEST_F(CheckpointStoreTest, ATurnThatChangesNothingLeavesNoFolder) {
  CheckpointStore store(dir_ / "ses.checkpoints");
  store.begin_message("m1");
  EXPECT_FALSE(fs::exists(dir_ / "ses.checkpoints"));
}

TEST_F(CheckpointStoreTest, CommandsOnAnotherExecutorAreRememberedPerMessageAndReadBack) {
  {
    CheckpointStore store(dir_ / "ses.checkpoints");
    store.begin_message("m1");
    store.commands_unkept("box");
    store.commands_unkept("box");
    store.begin_message("m2");
    store.commands_unkept("ctr");
    EXPECT_EQ(store.unkept_commands_since("m1"), (std::vector<std::string>{"box", "ctr"}));
    EXPECT_EQ(store.unkept_commands_since("m2"), std::vector<std::string>{"ctr"}) << "only from that message on";
  }
  CheckpointStore again(dir_ / "ses.checkpoints");
  EXPECT_EQ(again.unkept_commands_since("m1"), (std::vector<std::string>{"box", "ctr"})) << "kept with the session";
  EXPECT_TRUE(again.unkept_commands_since("nope").empty());
}

TEST_F(CheckpointStoreTest, AFileOnAnotherExecutorIsJudgedByWhatItHoldsThere) {
  CheckpointStore store(dir_ / "ses.checkpoints");
  const fs::path key = "@box:/srv/a.txt";
  store.begin_message("m1");
  store.before_change(key, std::string("old"));
  store.after_change(key, std::string("new"));
  auto as_agent_left = store.before("m1", {{key, std::string("new")}});
  ASSERT_TRUE(as_agent_left && as_agent_left->size() == 1u);
  EXPECT_FALSE((*as_agent_left)[0].changed_by_hand);
  EXPECT_EQ((*as_agent_left)[0].content, std::optional<std::string>("old"));
  auto by_hand = store.before("m1", {{key, std::string("edited there")}});
  EXPECT_TRUE((*by_hand)[0].changed_by_hand) << "what it holds there now, not a local file of that name";
  EXPECT_EQ(*store.changed_since("m1"), std::vector<fs::path>{key});
}
