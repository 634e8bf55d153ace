// The editor as an executor (DESIGN §10): on local, files go through the editor's fs/* and
// commands through its terminal/* where it offers them, the rest through the local executor; a
// path naming a process's own files never reaches the editor.
#include <gtest/gtest.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "../agent/fakes.hpp"
#include "../tools/fake_executor.hpp"
#include "runtime/server/editor_executor.hpp"

using namespace runtime;

namespace {

class OfferingEditor : public fakes::FakeEditor {
 public:
  bool reads = true, writes = true, terminals = true;
  bool exits = true;  // the command exits by itself (else it runs until killed)
  int create_ms = 0;  // terminal/create is answered this late (a given-up request: an error)
  std::vector<std::vector<std::string>> created;
  std::vector<std::string> killed, released;
  bool can_read_files() const override { return reads; }
  bool can_write_files() const override { return writes; }
  bool has_terminals() const override { return terminals; }
  boost::asio::awaitable<std::string> terminal_create(const std::string&, const std::string& command,
                                                      const std::vector<std::string>& args, const std::string& cwd,
                                                      std::int64_t, support::CancelSource* cancel) override {
    if (create_ms > 0) {
      boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, std::chrono::milliseconds(create_ms));
      co_await t.async_wait(boost::asio::use_awaitable);
      if (cancel && cancel->cancelled()) throw EditorError(-32800, "terminal/create given up");
    }
    created.push_back(args);
    created.back().insert(created.back().begin(), command);
    created.back().push_back("@" + cwd);
    co_return "term_1";
  }
  boost::asio::awaitable<TerminalExit> terminal_wait_for_exit(const std::string&, const std::string&,
                                                              support::CancelSource* stop) override {
    if (!exits) {
      boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
      while (!stop->cancelled()) {
        t.expires_after(std::chrono::milliseconds(5));
        co_await t.async_wait(boost::asio::use_awaitable);
      }
      throw EditorError(-32800, "stopped waiting");
    }
    co_return TerminalExit{7, std::nullopt};
  }
  boost::asio::awaitable<TerminalOutput> terminal_output(const std::string&, const std::string&) override {
    co_return TerminalOutput{"printed\n", false, std::nullopt};
  }
  boost::asio::awaitable<void> terminal_kill(const std::string&, const std::string& id) override {
    killed.push_back(id);
    co_return;
  }
  boost::asio::awaitable<void> terminal_release(const std::string&, const std::string& id) override {
    released.push_back(id);
    co_return;
  }
};

struct EditorExecutorTest : ::testing::Test {
  std::shared_ptr<Executor> io() {
    return server::local_for_tools(editor, "ses_test", std::shared_ptr<Executor>(&local, [](Executor*) {}));
  }
  template <class T>
  T run(boost::asio::awaitable<T> a) {
    return fakes::run(ioc, std::move(a));
  }
  boost::asio::io_context ioc;
  OfferingEditor editor;
  fakes::MemoryExecutor local;
};

}  // namespace

TEST_F(EditorExecutorTest, FilesGoThroughTheEditorWhereItOffersThem) {
  editor.files["/ws/a.txt"] = "unsaved buffer";
  local.files["/ws/a.txt"] = "on disk";
  auto ex = io();
  EXPECT_EQ(run(ex->read_file("/ws/a.txt", nullptr)), "unsaved buffer") << "the editor sees unsaved buffers";
  run(ex->write_file("/ws/b.txt", "new", nullptr));
  EXPECT_EQ(editor.files.at("/ws/b.txt"), "new") << "the editor's buffers follow our writes";
  EXPECT_EQ(local.files.count("/ws/b.txt"), 0u);
  EXPECT_TRUE(ex->opens_elsewhere(false) && ex->opens_elsewhere(true));
}

TEST_F(EditorExecutorTest, WhatTheEditorDoesNotOfferIsLocal) {
  editor.reads = false;
  editor.terminals = false;
  local.files["/ws/a.txt"] = "on disk";
  auto ex = io();
  EXPECT_EQ(run(ex->read_file("/ws/a.txt", nullptr)), "on disk");
  EXPECT_FALSE(ex->opens_elsewhere(false)) << "reads are ours: /proc/self is the file judged";
  run(ex->run(RunRequest{"ls"}, nullptr));
  EXPECT_EQ(local.runs.size(), 1u) << "no terminals: the local executor runs it";
  editor.writes = false;
  EXPECT_EQ(io().get(), &local) << "an editor that offers nothing is not in the way";
}

TEST_F(EditorExecutorTest, AProcessFileNeverReachesTheEditor) {
  auto ex = io();
  EXPECT_THROW(run(ex->read_file("/proc/self/cwd/.ssh/id_rsa", nullptr)), ExecutorError);
  EXPECT_THROW(run(ex->write_file("/dev/fd/3", "x", nullptr)), ExecutorError);
  EXPECT_TRUE(editor.files.empty());
}

TEST_F(EditorExecutorTest, AnEditorErrorIsAnExecutorErrorNamingThePath) {
  auto ex = io();
  try {
    run(ex->read_file("/ws/missing.txt", nullptr));
    FAIL() << "a missing file is an error";
  } catch (const ExecutorError& e) {
    EXPECT_NE(std::string(e.what()).find("Cannot read /ws/missing.txt"), std::string::npos) << e.what();
  }
}

TEST_F(EditorExecutorTest, ACommandRunsInTheEditorsTerminalWrappedAndReleased) {
  auto ex = io();
  std::string shown;
  RunRequest request{"make", {"/sandbox", "--"}};
  request.on_terminal = [&](const std::string& id) { shown = id; };
  auto r = run(ex->run(std::move(request), nullptr));
  ASSERT_EQ(editor.created.size(), 1u);
  EXPECT_EQ(editor.created[0], (std::vector<std::string>{"/sandbox", "--", "bash", "-c", "make", "@/ws"}))
      << "the editor runs the sandbox helper, which runs bash, in the working directory";
  EXPECT_EQ(shown, "term_1") << "the tool call shows the terminal as soon as it runs";
  EXPECT_EQ(r.terminal_id, "term_1");
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.output, "printed\n");
  EXPECT_TRUE(editor.killed.empty()) << "a command that ended is not killed";
  EXPECT_EQ(editor.released, (std::vector<std::string>{"term_1"})) << "the terminal is released";
  EXPECT_TRUE(local.runs.empty());
}

TEST_F(EditorExecutorTest, ATimeoutKillsTheTerminal) {
  editor.exits = false;
  auto ex = io();
  RunRequest request{"sleep 100"};
  request.timeout = std::chrono::milliseconds(20);
  auto r = run(ex->run(std::move(request), nullptr));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(editor.killed, (std::vector<std::string>{"term_1"}));
  EXPECT_EQ(editor.released, (std::vector<std::string>{"term_1"}));
}

TEST_F(EditorExecutorTest, ATurnCancelledWhileTheTerminalIsCreatedStillKillsAndReleasesIt) {
  editor.exits = false;
  editor.create_ms = 30;
  auto ex = io();
  support::CancelSource turn;
  boost::asio::steady_timer soon(ioc, std::chrono::milliseconds(5));
  soon.async_wait([&](boost::system::error_code) { turn.cancel(); });
  try {
    run(ex->run(RunRequest{"sleep 30"}, &turn));
  } catch (const ExecutorError& e) {
    ADD_FAILURE() << "the editor answered terminal/create after the cancel: " << e.what();
  }
  EXPECT_EQ(editor.killed, (std::vector<std::string>{"term_1"}))
      << "the editor had started the command when the turn was cancelled: it must be killed, not forgotten";
  EXPECT_EQ(editor.released, (std::vector<std::string>{"term_1"}));
}
