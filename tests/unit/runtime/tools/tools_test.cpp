// Each built-in tool against an in-memory executor, as the router runs it when the policy allows
// (fakes::run_allowed): what it declares before it runs, and what it does once allowed.
#include <gtest/gtest.h>

#include "../agent/fakes.hpp"
#include "fake_executor.hpp"
#include "runtime/tools/mcp_tool.hpp"
#include "runtime/tools/tool.hpp"

using namespace runtime;
namespace json = boost::json;

namespace {

struct ToolsTest : ::testing::Test {
  ToolsTest() {
    ctx.env_ = ToolEnv{"ses_test", "/ws", Mode::Default, "local", {}};
    ctx.executor_ = &ex;
  }
  ~ToolsTest() override { pool.join(); }
  tools::ToolResult run(tools::Tool& tool, json::object args) {
    return fakes::run(ioc, fakes::run_allowed(tool, ctx, std::move(args)));
  }
  tools::ApprovalRequest declared(tools::Tool& tool, json::object args) {
    return fakes::run(ioc, tool.approval(ctx, args));
  }

  boost::asio::io_context ioc;
  boost::asio::thread_pool pool{1};
  fakes::FakeEditor editor;
  fakes::AllowingContext ctx{editor, pool};
  fakes::MemoryExecutor ex;
};

const char* kPatch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** Add File: b.txt\n+born\n*** End Patch";

}  // namespace

TEST_F(ToolsTest, ReadFileDeclaresTheReadOfTheFileItOpens) {
  auto tool = tools::make_read_file_tool();
  auto request = declared(*tool, {{"path", "sub/../a.txt"}});
  EXPECT_EQ(request.permission, tools::Permission::Read);
  ASSERT_EQ(request.paths.size(), 1u);
  EXPECT_EQ(request.paths[0], "/ws/a.txt") << "the path judged is the path opened, `..` resolved";
  EXPECT_NE(request.refused_text.find("/ws/a.txt"), std::string::npos) << "a refusal names the file";
  EXPECT_TRUE(declared(*tool, json::object{}).refusal) << "no path: refused before anything is asked";
}

TEST_F(ToolsTest, ReadFileRefusesAProcessFileTheEditorWouldOpen) {
  auto tool = tools::make_read_file_tool();
  EXPECT_FALSE(declared(*tool, {{"path", "/proc/self/cwd/x"}}).refusal) << "read here, /proc/self is ours";
  ex.elsewhere = true;
  auto request = declared(*tool, {{"path", "/proc/self/cwd/x"}});
  ASSERT_TRUE(request.refusal) << "the editor would open its own /proc/self";
  EXPECT_NE(request.refusal->text.find("Refused: /proc/self/cwd/x"), std::string::npos) << request.refusal->text;
}

TEST_F(ToolsTest, ReadFileReadsTheWindowAndSaysWhenItIsCut) {
  auto tool = tools::make_read_file_tool();
  ex.files["/ws/a.txt"] = "one\ntwo\nthree\n";
  auto r = run(*tool, {{"path", "a.txt"}, {"offset", 2}, {"limit", 1}});
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, "two\n") << "the window the model asked for, read through the executor";
  ex.files["/ws/big.txt"] = std::string(300 * 1024, 'x');
  r = run(*tool, {{"path", "big.txt"}});
  EXPECT_NE(r.text.find("[... truncated at 256 KB; read further with offset/limit]"), std::string::npos);
  EXPECT_LT(r.text.size(), 257u * 1024);
  r = run(*tool, {{"path", "missing.txt"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("no such file"), std::string::npos) << r.text;
}

TEST_F(ToolsTest, BashDeclaresACommandAndRunsItOnTheExecutor) {
  auto tool = tools::make_bash_tool();
  EXPECT_EQ(declared(*tool, {{"command", "ls"}}).permission, tools::Permission::Execute);
  ex.answer = RunResult{3, std::nullopt, false, "oops\n", false};
  auto r = run(*tool, {{"command", "make"}, {"timeout_ms", 99'000'000}});
  ASSERT_EQ(ex.runs.size(), 1u);
  EXPECT_EQ(ex.runs[0].command, "make");
  EXPECT_EQ(ex.runs[0].timeout, std::chrono::milliseconds(600'000)) << "the timeout is capped at 600000 ms";
  EXPECT_TRUE(r.is_error) << "a non-zero exit is an error";
  EXPECT_NE(r.text.find("Exit code: 3"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("oops"), std::string::npos) << r.text;
  EXPECT_EQ(r.raw_output.at("exitCode"), 3);
}

TEST_F(ToolsTest, BashRefusesUnaskedWhereItCannotRun) {
  auto tool = tools::make_bash_tool();
  EXPECT_TRUE(declared(*tool, json::object{}).refusal) << "no command";
  ex.info_.can_run = false;
  auto request = declared(*tool, {{"command", "ls"}});
  ASSERT_TRUE(request.refusal) << "a files-only executor runs nothing";
  EXPECT_NE(request.refusal->text.find("has files only"), std::string::npos);
  EXPECT_TRUE(ex.runs.empty());
}

TEST_F(ToolsTest, BashInTheEditorsTerminalShowsTheTerminal) {
  auto tool = tools::make_bash_tool();
  ex.answer.terminal_id = "term_1";
  ex.answer.signal_name = "SIGKILL";
  ex.answer.exit_code.reset();
  auto r = run(*tool, {{"command", "sleep 9"}});
  ASSERT_EQ(r.content.size(), 1u);
  EXPECT_EQ(std::get<TerminalContent>(r.content[0]).terminal_id, "term_1") << "the result shows the live terminal";
  ASSERT_FALSE(ctx.updates.empty());
  ASSERT_TRUE(ctx.updates[0].content);
  EXPECT_EQ(std::get<TerminalContent>(ctx.updates[0].content->at(0)).terminal_id, "term_1")
      << "and the call shows it as soon as it runs";
  EXPECT_NE(r.text.find("Killed by signal SIGKILL"), std::string::npos) << r.text;
}

TEST_F(ToolsTest, ApplyPatchDeclaresEveryFileItWritesWithThePatchAsPreview) {
  auto tool = tools::make_apply_patch_tool();
  auto request = declared(*tool, {{"patch", kPatch}});
  EXPECT_EQ(request.permission, tools::Permission::Edit);
  EXPECT_EQ(request.paths, (std::vector<std::filesystem::path>{"/ws/a.txt", "/ws/b.txt"}));
  ASSERT_EQ(request.preview.size(), 1u);
  EXPECT_EQ(std::get<TextContent>(request.preview[0]).text, kPatch) << "asked before reading: the patch is the preview";
  EXPECT_TRUE(ex.files.empty() && ex.removed.empty());
  EXPECT_TRUE(declared(*tool, {{"patch", "nonsense"}}).refusal) << "an invalid patch is refused unasked";
  ex.info_.read_only = true;
  EXPECT_TRUE(declared(*tool, {{"patch", kPatch}}).refusal) << "a read-only executor is refused unasked";
}

TEST_F(ToolsTest, ApplyPatchPreparesTheDiffsWithoutWritingThenWrites) {
  auto tool = tools::make_apply_patch_tool();
  ex.files["/ws/a.txt"] = "old\n";
  json::object args{{"patch", kPatch}};
  auto request = fakes::run(ioc, tool->approval(ctx, args));
  auto ended = fakes::run(ioc, tool->prepare(ctx, args, request));
  EXPECT_FALSE(ended) << (ended ? ended->text : "");
  ASSERT_EQ(request.preview.size(), 2u) << "the question shows each file's diff";
  EXPECT_EQ(std::get<DiffContent>(request.preview[0]).path, "/ws/a.txt");
  EXPECT_EQ(ex.files.at("/ws/a.txt"), "old\n") << "prepare() writes nothing";
  EXPECT_EQ(ex.files.count("/ws/b.txt"), 0u);
  auto r = fakes::run(ioc, tool->run(ctx, args));
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(ex.files.at("/ws/a.txt"), "new\n");
  EXPECT_EQ(ex.files.at("/ws/b.txt"), "born\n");
}

TEST_F(ToolsTest, ApplyPatchThatDoesNotApplyWritesNothing) {
  auto tool = tools::make_apply_patch_tool();
  ex.files["/ws/a.txt"] = "something else\n";
  auto r = run(*tool, {{"patch", kPatch}});
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("does not apply, nothing was changed"), std::string::npos) << r.text;
  EXPECT_EQ(ex.files.count("/ws/b.txt"), 0u) << "no file of the patch is written";
  ex.files["/ws/a.txt"] = "old\n";
  ex.files["/ws/b.txt"] = "there\n";
  r = run(*tool, {{"patch", kPatch}});
  EXPECT_NE(r.text.find("already exists"), std::string::npos) << r.text;
  EXPECT_EQ(ex.files.at("/ws/a.txt"), "old\n");
}

TEST_F(ToolsTest, ApplyPatchDeletesAndMoves) {
  auto tool = tools::make_apply_patch_tool();
  ex.files["/ws/gone.txt"] = "x\n";
  ex.files["/ws/from.txt"] = "keep\n";
  auto r = run(*tool, {{"patch", "*** Begin Patch\n*** Delete File: gone.txt\n*** Update File: from.txt\n*** Move to: to.txt\n*** End Patch"}});
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(ex.files.count("/ws/gone.txt"), 0u);
  EXPECT_EQ(ex.files.at("/ws/to.txt"), "keep\n");
  EXPECT_EQ(ex.files.count("/ws/from.txt"), 0u) << "a move removes its source";
}

TEST_F(ToolsTest, UpdatePlanRefusesABadPlanUnaskedAndShowsAGoodOne) {
  auto tool = tools::make_update_plan_tool();
  json::array two_running{json::object{{"step", "a"}, {"status", "in_progress"}},
                          json::object{{"step", "b"}, {"status", "in_progress"}}};
  auto request = declared(*tool, {{"plan", two_running}});
  ASSERT_TRUE(request.refusal);
  EXPECT_NE(request.refusal->text.find("At most one step may be in_progress"), std::string::npos);
  EXPECT_TRUE(declared(*tool, {{"plan", json::array{json::object{{"step", "a"}, {"status", "done"}}}}}).refusal);
  auto r = run(*tool, {{"plan", json::array{json::object{{"step", "a"}, {"status", "pending"}}}}});
  EXPECT_EQ(r.text, "Plan updated (1 steps).");
  ASSERT_EQ(ctx.plans.size(), 1u);
  EXPECT_EQ(ctx.plans[0][0].content, "a");
  EXPECT_EQ(declared(*tool, {{"plan", json::array{}}}).permission, tools::Permission::None) << "a plan asks nothing";
}

TEST_F(ToolsTest, AnMcpToolIsAskedLikeACommandAndCallsItsServer) {
  bridge::mcp::ToolInfo info;
  info.name = "echo";
  std::vector<std::pair<std::string, json::object>> calls;
  tools::McpCallFn call = [&](const std::string& name, json::object args, support::CancelSource*,
                              bridge::mcp::Client::ProgressFn, tools::McpElicitFn) -> boost::asio::awaitable<json::object> {
    calls.emplace_back(name, args);
    co_return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", "hello"}}}}};
  };
  auto tool = tools::make_mcp_tool("mcp__srv__echo", "srv", info, call, 1000);
  EXPECT_EQ(declared(*tool, json::object{}).permission, tools::Permission::Execute) << "it can do anything: asked as a command";
  EXPECT_TRUE(calls.empty()) << "declaring calls nothing";
  auto r = run(*tool, {{"text", "hi"}});
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].first, "echo") << "the server's own name for the tool";
  EXPECT_EQ(calls[0].second.at("text"), "hi");
  EXPECT_EQ(r.text, "hello");
}
