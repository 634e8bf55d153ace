// `bash` and the command sandbox (README "Sandbox"): the helper's argv goes before `bash -c` for
// the local executor and for the editor's terminal; a refusal (no Landlock) returns before
// anything is asked or run.
#include <gtest/gtest.h>

#include "fakes.hpp"
#include "runtime/server/editor_executor.hpp"
#include "runtime/tools/tool.hpp"

namespace {

using namespace runtime;

class RecordingExecutor : public Executor {
 public:
  const ExecutorInfo& info() const override { return info_; }
  boost::asio::awaitable<std::string> working_directory(support::CancelSource*) override { co_return "/ws"; }
  boost::asio::awaitable<std::string> read_file(const std::string&, support::CancelSource*) override { co_return ""; }
  boost::asio::awaitable<void> write_file(const std::string&, const std::string&, support::CancelSource*) override {
    co_return;
  }
  boost::asio::awaitable<void> remove_file(const std::string&, support::CancelSource*) override { co_return; }
  boost::asio::awaitable<FileInfo> stat(const std::string&, support::CancelSource*) override { co_return FileInfo{}; }
  boost::asio::awaitable<RunResult> run(RunRequest request, support::CancelSource*) override {
    runs.push_back(std::move(request));
    co_return RunResult{0, std::nullopt, false, "ran\n", false};
  }
  std::vector<RunRequest> runs;

 private:
  ExecutorInfo info_{"local", "local", "", true, false, "/ws"};
};

class TerminalEditor : public fakes::FakeEditor {
 public:
  bool has_terminals() const override { return terminals; }
  bool can_read_files() const override { return reads; }
  bool can_write_files() const override { return reads; }
  bool reads = true;
  boost::asio::awaitable<std::string> terminal_create(const std::string&, const std::string& command,
                                                      const std::vector<std::string>& args, const std::string&,
                                                      std::int64_t, support::CancelSource*) override {
    created.push_back(args);
    created.back().insert(created.back().begin(), command);
    co_return "term_1";
  }
  boost::asio::awaitable<TerminalExit> terminal_wait_for_exit(const std::string&, const std::string&,
                                                              support::CancelSource*) override {
    co_return TerminalExit{0, std::nullopt};
  }
  boost::asio::awaitable<TerminalOutput> terminal_output(const std::string&, const std::string&) override {
    co_return TerminalOutput{};
  }
  bool terminals = false;
  std::vector<std::vector<std::string>> created;  // command, then args
};

class SandboxContext : public fakes::AllowingContext {
 public:
  SandboxContext(EditorHost& host, boost::asio::thread_pool& pool, CommandSandbox sandbox) : AllowingContext(host, pool) {
    env_ = ToolEnv{"ses_test", "/ws", Mode::AcceptEdits, "local", std::move(sandbox)};
    executor_ = &recording_;
  }
  RecordingExecutor recording_;
};

const std::vector<std::string> kPrefix{"/usr/bin/openvaala", "sandbox", "--write", "/ws", "--"};

struct BashSandbox : ::testing::Test {
  // Through the editor when it offers terminals: the router hands bash the editor's executor on local.
  tools::ToolResult run(SandboxContext& ctx) {
    auto bash = tools::make_bash_tool();
    auto local = std::shared_ptr<Executor>(&ctx.recording_, [](Executor*) {});
    auto io = server::local_for_tools(editor, "ses_test", local);
    ctx.executor_ = io.get();
    return fakes::run(ioc, fakes::run_allowed(*bash, ctx, boost::json::object{{"command", "echo hi"}}));
  }
  boost::asio::io_context ioc;
  boost::asio::thread_pool pool{1};
  TerminalEditor editor;
};

TEST_F(BashSandbox, LocallyTheHelperRunsBashC) {
  editor.reads = false;
  SandboxContext ctx(editor, pool, {kPrefix, ""});
  run(ctx);
  ASSERT_EQ(ctx.recording_.runs.size(), 1u);
  EXPECT_EQ(ctx.recording_.runs[0].wrapper, kPrefix);
  EXPECT_EQ(ctx.recording_.runs[0].command, "echo hi");
}

TEST_F(BashSandbox, InTheEditorsTerminalTheEditorRunsTheHelper) {
  editor.terminals = true;
  SandboxContext ctx(editor, pool, {kPrefix, ""});
  run(ctx);
  ASSERT_EQ(editor.created.size(), 1u);
  auto expected = kPrefix;
  expected.insert(expected.end(), {"bash", "-c", "echo hi"});
  EXPECT_EQ(editor.created[0], expected);
  EXPECT_TRUE(ctx.recording_.runs.empty());
}

TEST_F(BashSandbox, WithoutASandboxBashRunsAsBefore) {
  editor.terminals = true;
  SandboxContext ctx(editor, pool, {});
  run(ctx);
  ASSERT_EQ(editor.created.size(), 1u);
  EXPECT_EQ(editor.created[0], (std::vector<std::string>{"bash", "-c", "echo hi"}));
}

TEST_F(BashSandbox, ARefusalRunsNothingAndAsksNothing) {
  for (bool terminals : {false, true}) {
    editor.terminals = terminals;
    SandboxContext ctx(editor, pool, {{}, "no Landlock here; set 'sandbox: off'"});
    auto r = run(ctx);
    EXPECT_TRUE(r.is_error);
    EXPECT_EQ(r.text, "no Landlock here; set 'sandbox: off'");
    ASSERT_EQ(ctx.requests.size(), 1u);
    EXPECT_TRUE(ctx.requests[0].refusal) << "the refusal is declared before approval: nothing is asked";
    EXPECT_TRUE(ctx.recording_.runs.empty());
    EXPECT_TRUE(editor.created.empty());
  }
}

}  // namespace
