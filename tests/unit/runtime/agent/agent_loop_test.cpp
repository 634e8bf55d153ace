// The turn loop and the tool router against an in-memory editor and a scripted model: what the
// editor is shown, what the model is told, and how approvals are asked and remembered.
#include <gtest/gtest.h>

#include "loop_fixture.hpp"
#include "runtime/agent/agent_loop.hpp"

using namespace runtime;
using fakes::FakeEditor;
using fakes::ScriptedModel;
namespace json = boost::json;

namespace {

// A tool that runs a "command": declares Execute permission, counts its runs.
class CountingTool : public tools::Tool {
 public:
  int runs = 0;
  std::string name() const override { return "count"; }
  ToolSpec spec() const override { return {"count", "Counts", json::object{{"type", "object"}}}; }
  tools::ToolDescription describe(const json::object&, const ToolEnv&) const override {
    return {"Count once", ToolKind::Execute, {}};
  }
  boost::asio::awaitable<tools::ApprovalRequest> approval(tools::ToolContext&, const json::object&) override {
    tools::ApprovalRequest request;
    request.permission = tools::Permission::Execute;
    request.keys = {"count"};  // an "always" answer is remembered for every count
    request.keys_label = "`count`";
    co_return request;
  }
  boost::asio::awaitable<tools::ToolResult> run(tools::ToolContext&, const json::object&) override {
    ++runs;
    tools::ToolResult r;
    r.text = "counted " + std::to_string(runs);
    r.content.push_back(TextContent{r.text});
    r.raw_output = json::object{{"runs", runs}};
    co_return r;
  }
};

class AgentLoopTest : public fakes::LoopTest<ScriptedModel, CountingTool> {};

}  // namespace

TEST_F(AgentLoopTest, AnswerWithoutToolsEndsTheTurnAndStreamsTheText) {
  model.responses.push_back(ScriptedModel::says("hello there"));
  EXPECT_EQ(turn("hi"), StopReason::EndTurn);
  auto text = editor.all<TextDelta>();
  ASSERT_EQ(text.size(), 1u) << "the model's text reaches the editor as it streams";
  EXPECT_EQ(text[0].text, "hello there");
  ASSERT_EQ(session.conversation.history.size(), 2u) << "the prompt and the answer stay in the history";
  EXPECT_EQ(session.conversation.history[1].text, "hello there");
}

TEST_F(AgentLoopTest, AToolCallIsAnnouncedRunAndItsResultFedBack) {
  session.settings.mode = Mode::FullAuto;
  model.responses.push_back(ScriptedModel::calls("c1", "count", "{}"));
  model.responses.push_back(ScriptedModel::says("done"));
  EXPECT_EQ(turn("count"), StopReason::EndTurn);
  EXPECT_EQ(tool->runs, 1);
  auto begins = editor.all<ToolCallBegin>();
  ASSERT_EQ(begins.size(), 1u);
  EXPECT_EQ(begins[0].id, "c1");
  EXPECT_EQ(begins[0].fields.title, "Count once");
  EXPECT_EQ(begins[0].fields.kind, ToolKind::Execute);
  EXPECT_EQ(begins[0].fields.status, ToolStatus::Pending) << "a call is announced pending before it runs";
  auto updates = editor.all<ToolCallUpdate>();
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates[0].fields.status, ToolStatus::InProgress) << "an allowed call is marked in progress";
  EXPECT_EQ(updates[1].fields.status, ToolStatus::Completed);
  ASSERT_TRUE(updates[1].fields.raw_output);
  EXPECT_EQ(updates[1].fields.raw_output->at("runs"), 1);
  EXPECT_EQ(model.tool_result("c1"), "counted 1") << "the model gets the tool's result";
}

TEST_F(AgentLoopTest, AnUnknownToolOrBadArgumentsAnswerTheModel) {
  model.responses.push_back(ScriptedModel::calls("c1", "nope", "{}"));
  model.responses.push_back(ScriptedModel::calls("c2", "count", "[1,2]"));
  model.responses.push_back(ScriptedModel::says("ok"));
  EXPECT_EQ(turn("go"), StopReason::EndTurn);
  EXPECT_EQ(model.tool_result("c1"), "There is no tool named 'nope'.");
  EXPECT_NE(model.tool_result("c2").find("are not a JSON object"), std::string::npos) << model.tool_result("c2");
  EXPECT_EQ(tool->runs, 0);
  EXPECT_TRUE(editor.permission_requests.empty()) << "nothing is asked for a call that cannot run";
}

TEST_F(AgentLoopTest, RejectAlwaysIsRememberedAsARefusal) {
  editor.answers = {PermissionAnswer::RejectAlways};
  model.responses.push_back(ScriptedModel::calls("c1", "count", "{}"));
  model.responses.push_back(ScriptedModel::calls("c2", "count", "{}"));
  model.responses.push_back(ScriptedModel::says("ok"));
  turn("count twice");
  EXPECT_EQ(editor.permission_requests.size(), 1u) << "after 'Always reject' the tool is not asked about again";
  EXPECT_EQ(tool->runs, 0) << "after 'Always reject' the tool never runs";
  EXPECT_NE(model.tool_result("c2").find("rejected"), std::string::npos) << "the model is told: " << model.tool_result("c2");
  EXPECT_EQ(session.remembered_permissions.at("count"), false);
}

TEST_F(AgentLoopTest, AllowAlwaysIsRememberedAndAllowOnceIsNot) {
  editor.answers = {PermissionAnswer::AllowOnce, PermissionAnswer::AllowAlways};
  for (auto id : {"c1", "c2", "c3"}) model.responses.push_back(ScriptedModel::calls(id, "count", "{}"));
  model.responses.push_back(ScriptedModel::says("ok"));
  turn("count thrice");
  EXPECT_EQ(tool->runs, 3);
  EXPECT_EQ(editor.permission_requests.size(), 2u) << "allow once asks again; allow always does not";
  ASSERT_FALSE(editor.permission_requests.empty());
  const auto& asked = editor.permission_requests[0];
  EXPECT_EQ(asked.tool_name, "count");
  EXPECT_EQ(asked.call.title, "Count once") << "the prompt shows the call as the editor shows it";
  EXPECT_EQ(asked.call.status, ToolStatus::Pending);
}

TEST_F(AgentLoopTest, ACancelledPromptIsReportedAsACancelNotARejection) {
  // No answer left: the editor answers the prompt "cancelled".
  model.responses.push_back(ScriptedModel::calls("c1", "count", "{}"));
  model.responses.push_back(ScriptedModel::says("ok"));
  turn("count");
  EXPECT_EQ(tool->runs, 0);
  EXPECT_EQ(model.tool_result("c1"), "Cancelled by the user.")
      << "a cancelled permission prompt must not be reported as the user's rejection";
  auto updates = editor.all<ToolCallUpdate>();
  ASSERT_FALSE(updates.empty());
  EXPECT_EQ(updates.back().fields.status, ToolStatus::Failed);
  EXPECT_TRUE(session.remembered_permissions.empty()) << "a cancel is not remembered";
}

TEST_F(AgentLoopTest, AnEditorThatFailsThePromptRefusesTheCall) {
  editor.permission_fails = true;
  model.responses.push_back(ScriptedModel::calls("c1", "count", "{}"));
  model.responses.push_back(ScriptedModel::says("ok"));
  turn("count");
  EXPECT_EQ(tool->runs, 0) << "a call the user could not be asked about never runs";
  EXPECT_NE(model.tool_result("c1").find("rejected"), std::string::npos) << model.tool_result("c1");
}

TEST_F(AgentLoopTest, ReadOnlyRefusesWithoutAsking) {
  session.settings.mode = Mode::ReadOnly;
  model.responses.push_back(ScriptedModel::calls("c1", "count", "{}"));
  model.responses.push_back(ScriptedModel::says("ok"));
  turn("count");
  EXPECT_TRUE(editor.permission_requests.empty());
  EXPECT_NE(model.tool_result("c1").find("read-only mode"), std::string::npos) << model.tool_result("c1");
}

TEST_F(AgentLoopTest, LimitsEndTheTurnWithTheirStopReason) {
  session.settings.mode = Mode::FullAuto;
  settings.max_turn_requests = 2;
  for (auto id : {"c1", "c2", "c3"}) model.responses.push_back(ScriptedModel::calls(id, "count", "{}"));
  EXPECT_EQ(turn("loop"), StopReason::MaxTurnRequests);
  EXPECT_EQ(model.requests.size(), 2u) << "no request beyond max_turn_requests";

  auto cut = ScriptedModel::calls("c9", "count", "{\"half");
  cut.finish = FinishReason::MaxTokens;
  model.responses = {cut};
  const int runs = tool->runs;
  EXPECT_EQ(turn("again"), StopReason::MaxTokens);
  EXPECT_EQ(tool->runs, runs) << "a tool call cut off by the token limit never runs";
}

TEST_F(AgentLoopTest, ACancelledTurnStopsBeforeTheNextRequest) {
  cancel.cancel();
  EXPECT_EQ(turn("hi"), StopReason::Cancelled);
  EXPECT_TRUE(model.requests.empty());
}

TEST_F(AgentLoopTest, ModelFailuresReachTheCallerAndUsageIsShown) {
  auto r = ScriptedModel::says("x");
  r.usage = {1000, 50};
  model.responses.push_back(r);
  turn("one");
  auto usage = editor.all<ContextUsage>();
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].used, 1050);
  EXPECT_EQ(usage[0].size, 128000) << "the default context window";
  EXPECT_THROW(turn("two"), providers::ModelError) << "a model failure is the caller's to report";
  EXPECT_EQ(session.conversation.history.back().text, "two") << "the user's message stays in the history";
}

TEST_F(AgentLoopTest, AnAnswerTheUserStoppedStaysInTheHistoryMarkedAsInterrupted) {
  model.responses.push_back(ScriptedModel::says("Here is the first half"));
  model.stop_after_streaming = &cancel;
  EXPECT_EQ(turn("explain"), StopReason::Cancelled);
  ASSERT_EQ(session.conversation.history.size(), 2u) << "the partial answer is kept after the prompt";
  EXPECT_EQ(session.conversation.history[1].role, Message::Role::Assistant);
  EXPECT_EQ(session.conversation.history[1].text.rfind("Here is the first half", 0), 0u) << session.conversation.history[1].text;
  EXPECT_NE(session.conversation.history[1].text.find("interrupted"), std::string::npos)
      << "the model is told its answer was interrupted: " << session.conversation.history[1].text;
}

// A compaction that no model request follows (/compact) leaves the context at the summary's size:
// the old size would make every next turn compact again.
TEST_F(AgentLoopTest, ACompactionLeavesTheContextAtTheSummarysSize) {
  Message question;
  question.role = Message::Role::User;
  question.text = "old question";
  Message answer;
  answer.role = Message::Role::Assistant;
  answer.text = "old answer";
  session.conversation.history = {question, answer};
  session.conversation.context_tokens = 120000;
  auto summary = ScriptedModel::says("SUMMARY of the old turns");
  summary.usage.output_tokens = 50;
  model.responses.push_back(summary);
  EXPECT_TRUE(fakes::run(ioc, loop->compact(session, model, settings, cancel)));
  EXPECT_EQ(session.conversation.context_tokens, 50)
      << "after a compaction the context is the summary's, or the next turn compacts again";
}
