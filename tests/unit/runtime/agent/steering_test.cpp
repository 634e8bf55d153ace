// Steered messages in the turn loop (steering.hpp): they join the conversation at the turn's next
// model request, after the tool results, and an answer that would end the turn goes on for them.
#include <gtest/gtest.h>

#include <functional>

#include "loop_fixture.hpp"
#include "runtime/agent/agent_loop.hpp"
#include "runtime/agent/steering.hpp"

using namespace runtime;
using fakes::FakeEditor;
using fakes::ScriptedModel;
namespace json = boost::json;

namespace {

SteeredMessage steered(const std::string& text) {
  Message m;
  m.role = Message::Role::User;
  m.id = "msg_" + text;
  m.text = text;
  return {m, json::array{json::object{{"type", "text"}, {"text", text}}}};
}

// A tool whose run does `during` (the user steers while it runs).
class SlowTool : public tools::Tool {
 public:
  std::function<void()> during;
  std::string name() const override { return "slow"; }
  ToolSpec spec() const override { return {"slow", "Takes a while", json::object{{"type", "object"}}}; }
  tools::ToolDescription describe(const json::object&, const ToolEnv&) const override { return {"Slow", ToolKind::Other, {}}; }
  boost::asio::awaitable<tools::ApprovalRequest> approval(tools::ToolContext&, const json::object&) override {
    co_return tools::ApprovalRequest{};
  }
  boost::asio::awaitable<tools::ToolResult> run(tools::ToolContext&, const json::object&) override {
    if (during) during();
    tools::ToolResult r;
    r.text = "slow done";
    co_return r;
  }
};

// A scripted model that does `during(n)` while it streams its n-th answer.
class SteeredModel : public ScriptedModel {
 public:
  std::function<void(std::size_t)> during;
  boost::asio::awaitable<providers::ModelResponse> stream(const providers::ModelRequest& req, providers::StreamCallbacks& cb,
                                                          support::CancelSource* cancel) override {
    if (during) during(requests.size());
    co_return co_await ScriptedModel::stream(req, cb, cancel);
  }
};

class SteeringTest : public fakes::LoopTest<SteeredModel, SlowTool> {
 protected:
  SteeringTest() {
    session.id = "ses_steer";
    session.settings.mode = Mode::FullAuto;
  }
};

}  // namespace

TEST_F(SteeringTest, AMessageSteeredWhileAToolRunsFollowsItsResultInTheNextRequest) {
  tool->during = [this] { session.turn.steered.push_back(steered("also the tests")); };
  model.responses.push_back(ScriptedModel::calls("c1", "slow", "{}"));
  model.responses.push_back(ScriptedModel::says("done, tests too"));
  EXPECT_EQ(turn("fix it"), StopReason::EndTurn) << "the turn the message joined ends once, normally";
  ASSERT_EQ(model.requests.size(), 2u);
  const auto& second = model.requests[1];
  ASSERT_GE(second.size(), 4u);
  EXPECT_EQ(second[second.size() - 2].role, Message::Role::Tool) << "the tool result comes first";
  EXPECT_EQ(second.back().role, Message::Role::User);
  EXPECT_EQ(second.back().text, "also the tests") << "the steered message follows the tool result";
  EXPECT_FALSE(has_steered(session)) << "nothing is left waiting";
}

TEST_F(SteeringTest, AMessageSteeredDuringTheLastAnswerIsAnsweredInTheSameTurn) {
  model.during = [this](std::size_t n) {
    if (n == 0) session.turn.steered.push_back(steered("one more thing"));
  };
  model.responses.push_back(ScriptedModel::says("first answer"));
  model.responses.push_back(ScriptedModel::says("about that thing"));
  EXPECT_EQ(turn("hello"), StopReason::EndTurn);
  ASSERT_EQ(model.requests.size(), 2u) << "an answer that would end the turn goes on for a message steered meanwhile";
  EXPECT_EQ(model.requests[1].back().text, "one more thing");
  EXPECT_EQ(model.requests[1][model.requests[1].size() - 2].text, "first answer") << "the answer was not cut";
}

TEST_F(SteeringTest, JoinSteeredAppendsTheWaitingMessagesInOrder) {
  session.turn.steered.push_back(steered("a"));
  session.turn.steered.push_back(steered("b"));
  EXPECT_TRUE(has_steered(session));
  join_steered(session);
  ASSERT_EQ(session.conversation.history.size(), 2u);
  EXPECT_EQ(session.conversation.history[0].text, "a");
  EXPECT_EQ(session.conversation.history[1].text, "b");
  EXPECT_EQ(session.conversation.history[1].id, "msg_b") << "the id it was shown with is the one kept";
  EXPECT_FALSE(has_steered(session));
}

TEST(SteerOutcomeName, NamesAreThePeersWireNames) {
  EXPECT_STREQ(steer_outcome_name(SteerOutcome::Injected), "injected");
  EXPECT_STREQ(steer_outcome_name(SteerOutcome::StartedNewTurn), "startedNewTurn");
  EXPECT_STREQ(steer_outcome_name(SteerOutcome::PromptRequired), "promptRequired");
  EXPECT_STREQ(steer_outcome_name(SteerOutcome::Blocked), "failed");
}
