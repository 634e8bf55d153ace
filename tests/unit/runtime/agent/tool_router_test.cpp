// The tool router's approval step (Codex's orchestrator): the tool declares what a call needs,
// the router decides, asks, marks the call in progress and only then runs it. Every promise here
// is one ordering: nothing runs that was not allowed, nothing guarded is read before the answer.
#include <gtest/gtest.h>

#include "../tools/fake_executor.hpp"
#include "fakes.hpp"
#include "runtime/agent/tool_router.hpp"

using namespace runtime;
namespace json = boost::json;

namespace {

// A tool whose declaration a test sets, and which logs each step it is called for.
class StepTool : public tools::Tool {
 public:
  explicit StepTool(std::vector<std::string>& log) : log_(log) {}
  tools::ApprovalRequest declared;
  std::optional<tools::ToolResult> prepare_ends;  // prepare() ends the call with this
  std::string name() const override { return "step"; }
  ToolSpec spec() const override { return {"step", "Steps", json::object{{"type", "object"}}}; }
  tools::ToolDescription describe(const json::object&, const ToolEnv&) const override {
    return {"Step", ToolKind::Edit, {}};
  }
  boost::asio::awaitable<tools::ApprovalRequest> approval(tools::ToolContext&, const json::object&) override {
    log_.push_back("approval");
    co_return declared;
  }
  boost::asio::awaitable<std::optional<tools::ToolResult>> prepare(tools::ToolContext&, const json::object&,
                                                                   tools::ApprovalRequest& request) override {
    log_.push_back("prepare");
    request.preview = {TextContent{"the diff"}};
    co_return prepare_ends;
  }
  boost::asio::awaitable<tools::ToolResult> run(tools::ToolContext&, const json::object&) override {
    log_.push_back("run");
    co_return tools::ToolResult{"ran", false, {}, nullptr};
  }

 private:
  std::vector<std::string>& log_;
};

// The editor, logging when it is asked and when a call is marked in progress.
class LoggingEditor : public fakes::FakeEditor {
 public:
  explicit LoggingEditor(std::vector<std::string>& log) : log_(log) {}
  void emit(const std::string& sid, SessionEvent event) override {
    if (auto* u = std::get_if<ToolCallUpdate>(&event); u && u->fields.status == ToolStatus::InProgress)
      log_.push_back("in_progress");
    FakeEditor::emit(sid, std::move(event));
  }
  boost::asio::awaitable<PermissionAnswer> ask_permission(const std::string& sid, PermissionRequest request,
                                                          support::CancelSource* cancel) override {
    log_.push_back("ask");
    if (cancel_on_ask) cancel->cancel();
    co_return co_await FakeEditor::ask_permission(sid, std::move(request), cancel);
  }
  bool cancel_on_ask = false;

 private:
  std::vector<std::string>& log_;
};

class ToolRouterTest : public ::testing::Test {
 protected:
  ToolRouterTest() {
    auto t = std::make_unique<StepTool>(log);
    tool = t.get();
    std::vector<std::unique_ptr<tools::Tool>> builtins;
    builtins.push_back(std::move(t));
    router = std::make_unique<ToolRouter>(hooks, std::move(builtins));
    session.id = "ses_test";
    session.settings.cwd = "/work/project";
    tool->declared.permission = tools::Permission::Edit;
    tool->declared.paths = {"/work/project/a.txt"};
  }
  ~ToolRouterTest() override { pool.join(); }

  std::string call() {
    ToolCall c{"c1", "step", "{}"};
    return fakes::run(ioc, router->dispatch(session, c, settings, cancel)).result.text;
  }
  using Log = std::vector<std::string>;

  boost::asio::io_context ioc;
  boost::asio::thread_pool pool{1};
  std::vector<std::string> log;
  LoggingEditor editor{log};
  HookRuntime hooks{pool, editor};
  StepTool* tool = nullptr;
  std::unique_ptr<ToolRouter> router;
  Session session;
  TurnSettings settings;
  support::CancelSource cancel;
};

}  // namespace

TEST_F(ToolRouterTest, AnEditInsideIsPreparedThenAskedThenMarkedThenRun) {
  editor.answers = {PermissionAnswer::AllowOnce};
  EXPECT_EQ(call(), "ran");
  EXPECT_EQ(log, (Log{"approval", "prepare", "ask", "in_progress", "run"}))
      << "decide, ask, mark in progress, and only then run";
  ASSERT_EQ(editor.permission_requests.size(), 1u);
  ASSERT_TRUE(editor.permission_requests[0].call.content);
  EXPECT_EQ(std::get<TextContent>(editor.permission_requests[0].call.content->at(0)).text, "the diff")
      << "the question shows the preview prepare() built";
}

TEST_F(ToolRouterTest, AnEditOutsideIsAskedBeforeAnythingIsRead) {
  tool->declared.paths = {"/elsewhere/b.txt"};
  tool->declared.preview = {TextContent{"the patch"}};
  editor.answers = {PermissionAnswer::AllowOnce};
  EXPECT_EQ(call(), "ran");
  EXPECT_EQ(log, (Log{"approval", "ask", "prepare", "in_progress", "run"}))
      << "a guarded call's reads come after the user's answer";
  ASSERT_EQ(editor.permission_requests.size(), 1u);
  const auto title = editor.permission_requests[0].call.title.value_or("");
  EXPECT_NE(title.find("outside the session's folders"), std::string::npos) << title;
}

TEST_F(ToolRouterTest, ARejectedAskNeverRuns) {
  tool->declared.paths = {"/elsewhere/b.txt"};
  tool->declared.refused_text = "not that file";
  editor.answers = {PermissionAnswer::RejectOnce};
  EXPECT_EQ(call(), "not that file") << "the model is told what the tool said a refusal means";
  EXPECT_EQ(log, (Log{"approval", "ask"})) << "a rejected call is neither read nor run nor marked in progress";
}

TEST_F(ToolRouterTest, AFailedAskNeverRuns) {
  editor.permission_fails = true;
  auto text = call();
  EXPECT_NE(text.find("rejected"), std::string::npos) << text;
  EXPECT_EQ(log, (Log{"approval", "prepare", "ask"})) << "a question the editor failed is a refusal";
}

TEST_F(ToolRouterTest, ACancelDuringTheAskNeverRuns) {
  editor.cancel_on_ask = true;
  editor.answers = {PermissionAnswer::AllowOnce};
  EXPECT_EQ(call(), "Cancelled by the user.") << "an allow that comes after the cancel does not run the call";
  EXPECT_EQ(log, (Log{"approval", "prepare", "ask"}));
  EXPECT_TRUE(session.remembered_permissions.empty());
}

TEST_F(ToolRouterTest, ADeclaredRefusalEndsTheCallBeforeAnything) {
  tool->declared.refusal = tools::error_result("bad arguments");
  EXPECT_EQ(call(), "bad arguments");
  EXPECT_EQ(log, (Log{"approval"})) << "nothing is read, asked, marked or run";
}

TEST_F(ToolRouterTest, APrepareThatFailsEndsTheCallWithoutAsking) {
  tool->prepare_ends = tools::error_result("the patch does not apply");
  EXPECT_EQ(call(), "the patch does not apply");
  EXPECT_EQ(log, (Log{"approval", "prepare"}));
}

TEST_F(ToolRouterTest, TheCredentialsAndAProcesssEnvironmentAreForbiddenUnasked) {
  session.settings.mode = Mode::FullAuto;
  tool->declared.permission = tools::Permission::Read;
  tool->declared.paths = {"/proc/self/environ"};
  EXPECT_NE(call().find("Refused: no tool may read or write"), std::string::npos);
  EXPECT_EQ(log, (Log{"approval"})) << "forbidden in every mode, nobody asked, nothing read";
}

TEST_F(ToolRouterTest, ReadOnlyRejectsAnEditUnasked) {
  session.settings.mode = Mode::ReadOnly;
  EXPECT_NE(call().find("read-only mode"), std::string::npos);
  EXPECT_EQ(log, (Log{"approval", "prepare"}));
}

TEST_F(ToolRouterTest, ACallThatNeedsNothingIsMarkedAndRun) {
  tool->declared = {};
  EXPECT_EQ(call(), "ran");
  EXPECT_EQ(log, (Log{"approval", "prepare", "in_progress", "run"})) << "the router marks it in progress, not the tool";
  EXPECT_TRUE(editor.permission_requests.empty());
}

TEST_F(ToolRouterTest, FullAutoRunsAGuardedEditAfterPreparingIt) {
  session.settings.mode = Mode::FullAuto;
  tool->declared.paths = {"/elsewhere/b.txt"};
  EXPECT_EQ(call(), "ran");
  EXPECT_EQ(log, (Log{"approval", "prepare", "in_progress", "run"}));
}

namespace {

// Runs on an executor and keeps which one it was handed.
class WhereTool : public tools::Tool {
 public:
  explicit WhereTool(std::string name) : name_(std::move(name)) {}
  Executor* handed = nullptr;
  std::string name() const override { return name_; }
  ToolSpec spec() const override { return {name_, "Where", json::object{{"type", "object"}}}; }
  tools::ToolDescription describe(const json::object&, const ToolEnv&) const override { return {name_, ToolKind::Read, {}}; }
  bool runs_on_executor() const override { return true; }
  boost::asio::awaitable<tools::ToolResult> run(tools::ToolContext& ctx, const json::object&) override {
    handed = &ctx.executor();
    co_return tools::ToolResult{"here", false, {}, nullptr};
  }

 private:
  std::string name_;
};

// An editor that offers its own executor for local.
class ExecutorEditor : public fakes::FakeEditor {
 public:
  std::shared_ptr<Executor> mine = std::make_shared<fakes::MemoryExecutor>();
  std::shared_ptr<Executor> wrapped;
  std::shared_ptr<Executor> local_for_tools(const std::string&, std::shared_ptr<Executor> local) override {
    wrapped = std::move(local);
    return mine;
  }
};

}  // namespace

TEST(ToolRouterIo, OnLocalTheToolIsHandedTheEditorsExecutor) {
  boost::asio::io_context ioc;
  boost::asio::thread_pool pool{1};
  ExecutorEditor editor;
  HookRuntime hooks{pool, editor};
  auto t = std::make_unique<WhereTool>("where");
  auto* tool = t.get();
  std::vector<std::unique_ptr<tools::Tool>> builtins;
  builtins.push_back(std::move(t));
  ToolRouter router(hooks, std::move(builtins));
  Session session;
  session.id = "ses_test";
  session.settings.cwd = "/";
  session.settings.mode = Mode::FullAuto;
  TurnSettings settings;
  support::CancelSource cancel;
  ToolCall call{"c1", "where", "{}"};
  EXPECT_EQ(fakes::run(ioc, router.dispatch(session, call, settings, cancel)).result.text, "here");
  EXPECT_EQ(tool->handed, editor.mine.get()) << "on local the tool reads, writes and runs through the editor's executor";
  ASSERT_TRUE(editor.wrapped);
  EXPECT_EQ(editor.wrapped->info().id, "local") << "which wraps the local executor for the rest";
  pool.join();
}

TEST(ToolRouterForTurn, AnAgentsServersSelectTheMcpToolsAndTheTurnsOwnComeLast) {
  WhereTool a("mcp__git__log"), b("mcp__web__fetch"), c("mcp__github__pr"), spawn("spawn_agent"), plan("update_plan");
  std::vector<tools::Tool*> mcp{&a, &b, &c};
  auto names = [](const std::vector<tools::Tool*>& tools) {
    std::vector<std::string> out;
    for (auto* t : tools) out.push_back(t->name());
    return out;
  };
  EXPECT_EQ(names(ToolRouter::for_turn(mcp, std::nullopt, {&spawn, &plan})),
            (std::vector<std::string>{"mcp__git__log", "mcp__web__fetch", "mcp__github__pr", "spawn_agent", "update_plan"}))
      << "no selection: every MCP tool, then the turn's own";
  EXPECT_EQ(names(ToolRouter::for_turn(mcp, std::vector<std::string>{"git"})), (std::vector<std::string>{"mcp__git__log"}))
      << "an agent's selection keeps its servers' tools only (git is not github)";
  EXPECT_TRUE(ToolRouter::for_turn(mcp, std::vector<std::string>{}).empty()) << "[] selects none";
}

TEST_F(ToolRouterTest, AnAlwaysAllowIsRememberedPerKeyNotPerTool) {
  tool->declared.permission = tools::Permission::Execute;
  tool->declared.paths.clear();
  tool->declared.keys = {"bash:echo"};
  tool->declared.keys_label = "`echo`";
  editor.answers = {PermissionAnswer::AllowAlways, PermissionAnswer::RejectOnce};
  EXPECT_EQ(call(), "ran");
  ASSERT_EQ(editor.permission_requests.size(), 1u);
  EXPECT_EQ(editor.permission_requests[0].remembers, "`echo`") << "the option names what is remembered";
  EXPECT_EQ(call(), "ran") << "the same key runs unasked";
  EXPECT_EQ(editor.permission_requests.size(), 1u);
  tool->declared.keys = {"bash:echo", "bash:rm"};
  EXPECT_NE(call(), "ran") << "a command with another part is asked (and was rejected)";
  EXPECT_EQ(editor.permission_requests.size(), 2u);
  EXPECT_EQ(session.remembered_permissions.count("step"), 0u) << "nothing is remembered per tool name";
}

TEST_F(ToolRouterTest, AnEditIsRememberedByItsRootAndNeverOutside) {
  editor.answers = {PermissionAnswer::AllowAlways, PermissionAnswer::AllowAlways, PermissionAnswer::RejectOnce};
  EXPECT_EQ(call(), "ran");
  ASSERT_EQ(editor.permission_requests.size(), 1u);
  EXPECT_EQ(editor.permission_requests[0].remembers, "edits in this workspace");
  EXPECT_EQ(session.remembered_permissions.at("edit:/work/project"), true);
  tool->declared.paths = {"/work/project/deep/b.txt"};
  EXPECT_EQ(call(), "ran") << "another file of the workspace runs unasked";
  EXPECT_EQ(editor.permission_requests.size(), 1u);
  tool->declared.paths = {"/work/project/c.txt", "/work/outside.txt"};
  EXPECT_EQ(call(), "ran") << "an edit that also reaches outside is asked (and allowed always)";
  ASSERT_EQ(editor.permission_requests.size(), 2u);
  EXPECT_TRUE(editor.permission_requests[1].remembers.empty()) << "an edit outside offers no 'always'";
  EXPECT_EQ(session.remembered_permissions.size(), 1u) << "and nothing beyond the root was remembered";
  tool->declared.paths = {"/work/outside.txt"};
  EXPECT_NE(call(), "ran") << "the outside file is asked again (and rejected)";
  EXPECT_EQ(editor.permission_requests.size(), 3u);
}
