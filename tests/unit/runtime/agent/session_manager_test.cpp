// The session manager against an in-memory editor: opening, closing, loading with replay, and
// what it refuses.
#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>

#include <cstdlib>

#include "manager_fixture.hpp"
#include "runtime/agent/journal.hpp"
#include "runtime/mcp/mcp_manager.hpp"

using namespace runtime;
using fakes::FakeEditor;

namespace {

class SessionManagerTest : public fakes::ManagerTest {
 protected:
  SessionManagerTest() { start(); }
  void start() { start_manager(); }

  std::shared_ptr<Session> open(OpenRequest::Kind kind, std::string id = {}) {
    OpenRequest r;
    r.kind = kind;
    r.session_id = std::move(id);
    r.cwd = tree.project();
    return fakes::run(ioc, sessions->open(std::move(r)));
  }

  AgentError::Kind error_of(std::function<void()> f) {
    try {
      f();
    } catch (const AgentError& e) {
      return e.kind;
    }
    ADD_FAILURE() << "no AgentError";
    return AgentError::Kind::Internal;
  }
};

}  // namespace

TEST_F(SessionManagerTest, ANewSessionIsOpenAndGetsItsSlashCommandsAfterTheReply) {
  auto s = open(OpenRequest::Kind::New);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->id.rfind("ses_", 0), 0u);
  EXPECT_EQ(sessions->find(s->id), s);
  ioc.restart();
  ioc.poll();
  auto commands = editor.all<CommandsChanged>();
  ASSERT_EQ(commands.size(), 1u) << "the editor is told the slash commands once the session exists";
  bool has_compact = false;
  for (const auto& c : commands[0].commands) has_compact = has_compact || c.name == "compact";
  EXPECT_TRUE(has_compact) << "/compact is offered";
}

TEST_F(SessionManagerTest, ClosingForgetsTheSessionAndUnknownIdsAreRefused) {
  auto s = open(OpenRequest::Kind::New);
  fakes::run(ioc, sessions->close(s->id));
  EXPECT_EQ(error_of([&] { sessions->find(s->id); }), AgentError::Kind::NotFound);
  EXPECT_EQ(error_of([&] { fakes::run(ioc, sessions->close("ses_nope")); }), AgentError::Kind::NotFound);
  EXPECT_EQ(error_of([&] { open(OpenRequest::Kind::Load, "ses_nope"); }), AgentError::Kind::NotFound);
}

TEST_F(SessionManagerTest, LoadReplaysTheHistoryAndRestoresTheMode) {
  auto s = open(OpenRequest::Kind::New);
  const std::string id = s->id;
  Message prompt;
  prompt.text = "Fix the parser";
  record(*s, sessions::UserMessage{prompt, {}});
  Message answer;
  answer.role = Message::Role::Assistant;
  answer.text = "Fixed.";
  record(*s, sessions::AssistantMessage{answer});
  sessions->set_mode(*s, Mode::AcceptEdits);
  EXPECT_EQ(editor.all<ModeChanged>().back().mode_id, "accept_edits");
  EXPECT_EQ(error_of([&] { open(OpenRequest::Kind::Load, id); }), AgentError::Kind::InvalidRequest)
      << "a session that is open cannot be loaded twice";
  fakes::run(ioc, sessions->close(id));
  editor.events.clear();

  auto loaded = open(OpenRequest::Kind::Load, id);
  EXPECT_EQ(loaded->settings.mode, Mode::AcceptEdits) << "the mode is kept by the journal";
  ASSERT_EQ(loaded->conversation.history.size(), 2u);
  auto users = editor.all<UserContent>();
  auto texts = editor.all<TextDelta>();
  ASSERT_EQ(users.size(), 1u) << "load shows the user's prompt again";
  EXPECT_EQ(users[0].block.at("text"), "Fix the parser");
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_EQ(texts[0].text, "Fixed.");
  EXPECT_EQ(editor.all<TitleChanged>().at(0).title, "Fix the parser");
  for (const auto& e : editor.events) EXPECT_EQ(e.session_id, id);
}

TEST_F(SessionManagerTest, ResumeRestoresWithoutReplay) {
  auto s = open(OpenRequest::Kind::New);
  const std::string id = s->id;
  Message prompt;
  prompt.text = "hello";
  record(*s, sessions::UserMessage{prompt, {}});
  fakes::run(ioc, sessions->close(id));
  editor.events.clear();
  auto resumed = open(OpenRequest::Kind::Resume, id);
  EXPECT_EQ(resumed->conversation.history.size(), 1u);
  EXPECT_TRUE(editor.all<UserContent>().empty()) << "resume does not replay the history";
}

TEST_F(SessionManagerTest, AnUnknownAgentIsInvalid) {
  auto s = open(OpenRequest::Kind::New);
  EXPECT_EQ(error_of([&] { sessions->set_agent(*s, "ghost"); }), AgentError::Kind::InvalidParams);
}

TEST_F(SessionManagerTest, AReloadGivesOpenSessionsNewSkillsAndKeepsTheOldConfigWhenBroken) {
  auto s = open(OpenRequest::Kind::New);
  ioc.restart();
  ioc.poll();
  editor.events.clear();
  tree.skill("config/skills/release-notes", "release-notes", "Writes release notes.");
  sessions->engines().reload_config();
  for (int i = 0; i < 500 && editor.all<CommandsChanged>().empty(); ++i) {
    ioc.restart();
    ioc.run_for(std::chrono::milliseconds(10));
  }
  auto commands = editor.all<CommandsChanged>();
  ASSERT_FALSE(commands.empty()) << "a reload shows open sessions their new slash commands";
  bool found = false;
  for (const auto& c : commands.back().commands) found = found || c.name == "release-notes";
  EXPECT_TRUE(found) << "the new skill is a slash command after the reload";
  EXPECT_NE(s->services.view.find_skill("release-notes"), nullptr);
}

// Issue 39.2: `required: true` holds when the server's executor cannot be reached (nothing listens
// on its port): the server is left out with a notice, and every turn fails naming it and why.
TEST_F(SessionManagerTest, ARequiredMcpServerOnAnUnreachableExecutorFailsTheTurn) {
  boost::asio::ip::tcp::acceptor probe(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const auto closed = probe.local_endpoint().port();
  probe.close();  // nobody listens there now
  tree.write("config/executors/deadbox.yaml", "type: ssh\nhost: 127.0.0.1\nport: " + std::to_string(closed) +
                                                  "\nuser: nobody\nssh_options: [UserKnownHostsFile=/dev/null]\n");
  tree.write("config/mcp_servers/far.yaml", "id: far\ntype: stdio\ncommand: node\nexecutors: [deadbox]\nrequired: true\n");
  start();
  ASSERT_TRUE(fakes::run(ioc, sessions->engines().skills_loaded(nullptr))) << "the whole configuration is in";
  auto s = open(OpenRequest::Kind::New);
  ASSERT_TRUE(fakes::run(ioc, sessions->complete_set_up(s, nullptr)));
  ASSERT_EQ(s->services.view.mcp_servers.size(), 1u);
  for (int turn = 0; turn < 2; ++turn) {
    try {
      fakes::run(ioc, sessions->mcp().place_required(s));
      ADD_FAILURE() << "promise: a required server whose executor cannot be reached fails the turn";
    } catch (const mcp::RequiredServerUnavailable& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("The required MCP server 'far' (" + (tree.config() / "mcp_servers/far.yaml").string() +
                               ") could not be reached: executor 'deadbox' (ssh nobody@127.0.0.1:" + std::to_string(closed) +
                               "): cannot connect: connection refused",
                           0),
                0u)
          << what;
    }
  }
}
