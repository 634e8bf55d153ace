// Task (one prompt of the user, start to end) against an in-memory editor and a scripted model,
// with a real SessionManager behind it: a turn with a tool call, cancel, a second prompt while one
// runs, the stop reasons, what the journal keeps of the turn's end, and the title it gave.
#include <gtest/gtest.h>

#include <cstdlib>

#include "manager_fixture.hpp"
#include "runtime/agent/journal.hpp"
#include "runtime/agent/task.hpp"

using namespace runtime;
using fakes::FakeEditor;
using fakes::ScriptedModel;

namespace {

// The task opens a model per prompt and drops it at the end: this one hands the test's script on.
class SharedModel : public providers::Model {
 public:
  explicit SharedModel(ScriptedModel& script) : script_(script) {}
  const providers::ResolvedModel& model() const override { return script_.model(); }
  boost::asio::awaitable<providers::ModelResponse> stream(const providers::ModelRequest& req, providers::StreamCallbacks& cb,
                                                          support::CancelSource* cancel) override {
    return script_.stream(req, cb, cancel);
  }

 private:
  ScriptedModel& script_;
};

class TaskTest : public fakes::ManagerTest {
 protected:
  TaskTest() {
    ::setenv("OV_TASK_TEST_KEY", "k", 1);
    tree.write("config/config.yaml",
               "model: fake/scripted\n"
               "max_turn_requests: 3\n"
               "providers:\n"
               "  fake:\n"
               "    api_type: openai\n"
               "    base_url: http://127.0.0.1:9/v1\n"
               "    api_key_env: OV_TASK_TEST_KEY\n");
    start_manager();
    auto open_model = [this](providers::ResolvedModel) { return std::make_unique<SharedModel>(model); };
    task = std::make_unique<Task>(
        Task::Deps{*sessions, sessions->engines(), sessions->mcp(), sessions->loop(), editor, pool, open_model});
    OpenRequest r;
    r.cwd = tree.project();
    session = fakes::run(ioc, sessions->open(std::move(r)));
    ioc.restart();
    ioc.poll();  // after the answer: its set-up and SessionStart hooks
  }
  ~TaskTest() override { task.reset(); }

  // The one place the tests call Task::run: the user's text as a prompt.
  StopReason prompt(const std::string& text, support::CancelSource& cancel) {
    UserPrompt typed;
    typed.parts.push_back(UserPrompt::Text{text});
    return fakes::run(ioc, task->run(session, std::move(typed), cancel));
  }
  StopReason prompt(const std::string& text) { return prompt(text, request_cancel); }
  // What the journal says of the last turn's end.
  std::string last_stop_reason() {
    auto loaded = sessions::SessionStore(tree.p("sessions")).load_summary(session->id);
    return loaded ? loaded->last_stop_reason : "(no journal)";
  }

  ScriptedModel model;
  std::unique_ptr<Task> task;
  std::shared_ptr<Session> session;
  support::CancelSource request_cancel;
};

}  // namespace

TEST_F(TaskTest, ATurnWithAToolCallRunsTheToolAndEndsWithTheModelsAnswer) {
  model.responses.push_back(ScriptedModel::calls(
      "call_1", "update_plan", R"({"plan":[{"step":"Read the parser","status":"in_progress"}]})"));
  model.responses.push_back(ScriptedModel::says("The plan is set."));
  EXPECT_EQ(prompt("Plan the fix"), StopReason::EndTurn);
  ASSERT_EQ(model.requests.size(), 2u) << "the tool's result goes back to the model in a second request";
  EXPECT_NE(model.tool_result("call_1"), "(no result for call_1)") << "the model is told the tool's result";
  auto plans = editor.all<PlanShown>();
  ASSERT_EQ(plans.size(), 1u) << "the turn's own update_plan tool ran and the editor was shown the plan";
  EXPECT_EQ(plans[0].entries.at(0).content, "Read the parser");
  const auto& history = session->conversation.history;
  ASSERT_FALSE(history.empty());
  EXPECT_EQ(history.front().role, Message::Role::User);
  EXPECT_NE(history.front().text.find("Plan the fix"), std::string::npos) << "the user's prompt opens the turn's history";
  EXPECT_EQ(history.back().text, "The plan is set.") << "the model's answer closes it";
  EXPECT_EQ(last_stop_reason(), "end_turn") << "the turn's end is journaled";
  EXPECT_FALSE(session->turn.cancel) << "no turn is in flight once it ended";
}

TEST_F(TaskTest, TheUserCancellingEndsTheTurnCancelledAndTheNextPromptRuns) {
  model.responses.push_back(ScriptedModel::says("Half an ans"));
  model.stop_after_streaming = &request_cancel;  // session/cancel while the answer streams
  EXPECT_EQ(prompt("Explain the parser"), StopReason::Cancelled);
  EXPECT_EQ(last_stop_reason(), "cancelled") << "a cancelled turn is journaled as such";
  EXPECT_FALSE(session->turn.cancel) << "the cancelled turn is no longer in flight";

  support::CancelSource fresh;
  model.responses.push_back(ScriptedModel::says("Done."));
  EXPECT_EQ(prompt("Again", fresh), StopReason::EndTurn) << "after a cancel the session takes the next prompt";
}

TEST_F(TaskTest, ASecondPromptWhileOneRunsIsRefused) {
  session->turn.cancel = std::make_shared<support::CancelSource>();  // a turn in flight
  try {
    prompt("Meanwhile");
    ADD_FAILURE() << "a second prompt must not run beside the first";
  } catch (const AgentError& e) {
    EXPECT_EQ(e.kind, AgentError::Kind::InvalidRequest);
  }
  EXPECT_TRUE(model.requests.empty()) << "the model is not asked";
  EXPECT_TRUE(session->turn.cancel) << "the turn in flight is left alone";
}

TEST_F(TaskTest, EachStopReasonOfTheModelEndsTheTurnAndIsJournaled) {
  auto cut = ScriptedModel::says("The answer was cut");
  cut.finish = FinishReason::MaxTokens;
  model.responses.push_back(cut);
  EXPECT_EQ(prompt("Long answer"), StopReason::MaxTokens);
  EXPECT_EQ(last_stop_reason(), "max_tokens");

  auto refused = ScriptedModel::says("No.");
  refused.finish = FinishReason::Refusal;
  model.responses.push_back(refused);
  EXPECT_EQ(prompt("Something refused"), StopReason::Refusal);
  EXPECT_EQ(last_stop_reason(), "refusal");

  // max_turn_requests: 3 in config.yaml: a model that keeps calling tools is stopped at the third request.
  for (int i = 0; i < 3; ++i)
    model.responses.push_back(ScriptedModel::calls("call_" + std::to_string(i), "update_plan",
                                                   R"({"plan":[{"step":"Loop","status":"pending"}]})"));
  const auto before = model.requests.size();
  EXPECT_EQ(prompt("Keep going"), StopReason::MaxTurnRequests);
  EXPECT_EQ(model.requests.size() - before, 3u) << "no request beyond the configured maximum";
  EXPECT_EQ(last_stop_reason(), "max_turn_requests");
}

TEST_F(TaskTest, AModelErrorEndsTheTurnAsAnErrorInTheJournal) {
  // No scripted response: the model fails.
  EXPECT_THROW(prompt("Hello"), providers::ModelError);
  EXPECT_EQ(last_stop_reason(), "error") << "a turn that throws is journaled as ended in error";
  EXPECT_FALSE(session->turn.cancel) << "and it is no longer in flight";
}

TEST_F(TaskTest, TheFirstTurnTitlesTheSessionOnceAndALaterTurnDoesNotAgain) {
  model.responses.push_back(ScriptedModel::says("Hi."));
  EXPECT_EQ(prompt("Fix the parser"), StopReason::EndTurn);
  auto titles = editor.all<TitleChanged>();
  ASSERT_EQ(titles.size(), 1u) << "the first turn gives the session its title";
  EXPECT_EQ(titles[0].title, "Fix the parser");
  model.responses.push_back(ScriptedModel::says("Again."));
  EXPECT_EQ(prompt("Something else"), StopReason::EndTurn);
  EXPECT_EQ(editor.all<TitleChanged>().size(), 1u) << "a title that did not change is not shown again";
}

TEST_F(TaskTest, AResumedSessionsFirstTurnDoesNotShowItsOldTitleAgain) {
  model.responses.push_back(ScriptedModel::says("Hi."));
  EXPECT_EQ(prompt("Fix the parser"), StopReason::EndTurn);
  const std::string id = session->id;
  fakes::run(ioc, sessions->close(id));
  OpenRequest r;
  r.kind = OpenRequest::Kind::Resume;
  r.session_id = id;
  r.cwd = tree.project();
  session = fakes::run(ioc, sessions->open(std::move(r)));
  ioc.restart();
  ioc.poll();
  editor.events.clear();
  model.responses.push_back(ScriptedModel::says("Again."));
  EXPECT_EQ(prompt("Something else"), StopReason::EndTurn);
  EXPECT_TRUE(editor.all<TitleChanged>().empty()) << "the title the session had before this turn is not shown by it";
}

TEST_F(TaskTest, ARefusedSlashCommandEndsTheTurnWithANoticeWithoutAskingTheModel) {
  EXPECT_EQ(prompt("/skill:no-such-skill please"), StopReason::EndTurn);
  EXPECT_TRUE(model.requests.empty()) << "an unknown slash command never reaches the model";
  bool told = false;
  for (const auto& n : editor.all<Notice>()) told = told || n.title == "Slash command refused";
  EXPECT_TRUE(told) << "the user is told the command was refused";
}
