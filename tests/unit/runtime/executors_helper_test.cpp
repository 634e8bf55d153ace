// The executor helper (DESIGN §10, runtime/executors/helper_*.hpp, remote_helper.hpp): the real
// `openvaala executor-helper` (OPENVAALA_BINARY) driven by HelperClient, and the ssh executor
// using it through the fake `ssh` of fake_ssh_fixture.hpp.
#include <signal.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fstream>
#include <thread>

#include "fake_ssh_fixture.hpp"
#include "runtime/executors/helper_binary.hpp"
#include "runtime/executors/helper_protocol.hpp"
#include "runtime/executors/remote_helper.hpp"

using namespace executor_test;
using runtime::executors::HelperClient;
using runtime::executors::RemoteHelper;
namespace helper = runtime::executors::helper;

namespace {

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0; }

// Waits (bounded) for `pid` to be gone; true when it is.
bool gone_within(pid_t pid, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (process_alive(pid) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return !process_alive(pid);
}

// The pid a command wrote to `file`, once it is there (bounded).
pid_t pid_from(const fs::path& file) {
  for (int i = 0; i < 500 && read_text(file).find('\n') == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return static_cast<pid_t>(std::atoi(read_text(file).c_str()));
}

class Helper : public ExecutorTest {
 protected:
  Helper() {
    std::string why;
    client = HelperClient::start(ioc.get_executor(), {OPENVAALA_BINARY, "executor-helper"}, std::chrono::seconds(10), why);
    if (!client) throw std::runtime_error("the helper did not start: " + why);
    remote = std::make_shared<RemoteHelper>(client, "~/helper");
    remote->set_errors([](const std::string& what) { return runtime::ExecutorError("box: " + what); }, nullptr);
  }
  ~Helper() override { client->close(); }

  // Runs `command` there without waiting for it (its pid is written to `pidfile`).
  void start_in_background(const std::string& command, support::CancelSource* cancel = nullptr) {
    asio::co_spawn(
        ioc,
        [this, command, cancel]() -> asio::awaitable<void> {
          runtime::RunRequest r;
          r.command = command;
          try {
            background = co_await remote->run(r, cancel);
          } catch (const runtime::ExecutorError& e) {
            background_error = e.what();
          }
          background_done = true;
        },
        asio::detached);
  }

  std::shared_ptr<HelperClient> client;
  std::shared_ptr<RemoteHelper> remote;
  runtime::RunResult background;
  std::string background_error;
  bool background_done = false;
};

}  // namespace

TEST(HelperFrames, AreReassembledFromAnySplitAndRejectedWhenTheyCannotBeFrames) {
  const std::string bytes = helper::encode({7, helper::kRead, "payload"}) + helper::encode({8, helper::kOk, ""});
  helper::FrameReader r;
  for (char c : bytes) r.add(std::string_view(&c, 1));
  auto a = r.next();
  auto b = r.next();
  ASSERT_TRUE(a && b) << "two frames fed a byte at a time are two frames";
  EXPECT_EQ(a->id, 7u);
  EXPECT_EQ(a->kind, helper::kRead);
  EXPECT_EQ(a->payload, "payload");
  EXPECT_EQ(b->id, 8u);
  EXPECT_EQ(b->payload, "");
  EXPECT_FALSE(r.next());
  helper::FrameReader too_short;
  too_short.add(std::string("\0\0\0\2ab", 6));
  EXPECT_THROW(too_short.next(), std::runtime_error) << "a length below id + kind is not a frame";
  helper::FrameReader too_large;
  too_large.add("\xff\xff\xff\xff");
  EXPECT_THROW(too_large.next(), std::runtime_error) << "a 4 GiB frame is refused before it is buffered";
}

TEST_F(Helper, AnswersFileRequestsAsTheScriptsDo) {
  write_text(dir / "a.txt", "there\n");
  EXPECT_EQ(run(remote->read_file((dir / "a.txt").string(), nullptr)), "there\n");
  fs::permissions(dir / "a.txt", fs::perms(0600));
  run(remote->write_file((dir / "a.txt").string(), "new", nullptr));
  EXPECT_EQ(read_text(dir / "a.txt"), "new");
  EXPECT_EQ(mode_of(dir / "a.txt"), 0600u) << "a rewrite keeps the file's mode";
  run(remote->write_file((dir / "sub" / "b.txt").string(), "made", nullptr));
  EXPECT_EQ(read_text(dir / "sub" / "b.txt"), "made") << "folders are made";
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".openvaala."), std::string::npos) << "no temp file left: " << e.path();
  auto f = run(remote->stat((dir / "a.txt").string(), nullptr));
  EXPECT_TRUE(f.exists && !f.is_directory && f.size == 3u);
  EXPECT_TRUE(run(remote->stat((dir / "sub").string(), nullptr)).is_directory);
  EXPECT_FALSE(run(remote->stat((dir / "none").string(), nullptr)).exists);
  run(remote->remove_file((dir / "sub" / "b.txt").string(), nullptr));
  EXPECT_FALSE(fs::exists(dir / "sub" / "b.txt"));
  EXPECT_EQ(error_of(remote->read_file((dir / "none").string(), nullptr)),
            "box: cannot read " + (dir / "none").string() + ": No such file or directory");
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0644), 0);
  EXPECT_EQ(error_of(remote->read_file((dir / "pipe").string(), nullptr)),
            "box: cannot read " + (dir / "pipe").string() + ": it is not a regular file")
      << "a FIFO would hold the request until someone writes to it";
}

TEST_F(Helper, ResolvesPathsWithRealpathAndTheConfigRootLast) {
  fs::create_directories(dir / "real");
  fs::create_symlink(dir / "real", dir / "link");
  const std::string out = run(remote->real_paths({(dir / "link" / "x").string(), (dir / "a" / ".." / "b").string()}, nullptr));
  std::vector<std::string> parts;
  for (std::size_t at = 0, end; (end = out.find('\0', at)) != std::string::npos; at = end + 1) parts.push_back(out.substr(at, end - at));
  ASSERT_EQ(parts.size(), 3u) << "each path, then the config root";
  EXPECT_EQ(parts[0], (dir / "real" / "x").string()) << "a symlinked folder is followed";
  EXPECT_EQ(parts[1], (dir / "b").string());
  EXPECT_TRUE(parts[2].ends_with("/openvaala")) << parts[2];
}

TEST_F(Helper, RunsCommandsWithTheirOutputAndExitStatus) {
  std::string seen;
  runtime::RunRequest r;
  r.command = "echo out; echo err >&2; exit 3";
  r.on_output = [&](std::string_view chunk) { seen += chunk; };
  auto result = run(remote->run(r, nullptr));
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.output, "out\nerr\n") << "stdout and stderr interleaved";
  EXPECT_EQ(seen, "out\nerr\n") << "streamed as it came";
}

TEST_F(Helper, ManyRequestsAreInFlightAtOnce) {
  write_text(dir / "a.txt", "quick");
  ASSERT_EQ(::mkfifo((dir / "go").c_str(), 0644), 0);
  start_in_background("read line < " + (dir / "go").string() + "; echo finished");
  EXPECT_EQ(run(remote->read_file((dir / "a.txt").string(), nullptr)), "quick")
      << "a read is answered while a command runs on the same stream";
  EXPECT_FALSE(background_done);
  std::ofstream(dir / "go") << "now\n";  // opens once the command has it open for reading
  for (int i = 0; i < 500 && !background_done; ++i) ioc.run_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(background_done);
  EXPECT_EQ(background.output, "finished\n");
}

TEST_F(Helper, ACancelEndsTheCommandsWholeProcessGroupThere) {
  support::CancelSource cancel;
  start_in_background("sleep 30 & echo $! > " + (dir / "pid").string() + "; wait", &cancel);
  ioc.run_for(std::chrono::milliseconds(50));
  const pid_t sleeper = pid_from(dir / "pid");
  ASSERT_GT(sleeper, 0);
  cancel.cancel();
  for (int i = 0; i < 500 && !background_done; ++i) ioc.run_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(background_done);
  EXPECT_TRUE(gone_within(sleeper, std::chrono::seconds(5))) << "the background sleep must die with the cancelled command";
}

TEST_F(Helper, ClosingTheChannelEndsEverythingItStarted) {
  start_in_background("sleep 30 & echo $! > " + (dir / "pid").string() + "; wait");
  ioc.run_for(std::chrono::milliseconds(50));
  const pid_t sleeper = pid_from(dir / "pid");
  ASSERT_GT(sleeper, 0);
  client->close();
  EXPECT_TRUE(gone_within(sleeper, std::chrono::seconds(5))) << "the end of the helper's stdin ends its process groups";
  for (int i = 0; i < 100 && !background_done; ++i) ioc.run_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(background_done) << "the command's caller is answered (its exit, or the lost channel)";
}

TEST_F(Helper, WhatAFinishedCommandLeftRunningEndsWithTheChannel) {
  runtime::RunRequest r;
  r.command = "sleep 30 >/dev/null 2>&1 </dev/null & echo $! > " + (dir / "pid").string();
  EXPECT_EQ(run(remote->run(r, nullptr)).exit_code, 0);
  const pid_t sleeper = pid_from(dir / "pid");
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(process_alive(sleeper)) << "a background process outlives its command while the channel is open";
  client->close();
  EXPECT_TRUE(gone_within(sleeper, std::chrono::seconds(5))) << "nothing the helper started outlives its channel";
}

TEST_F(Helper, ATimeoutKillsTheCommandAndSaysSo) {
  runtime::RunRequest r;
  r.command = "sleep 30";
  r.timeout = std::chrono::milliseconds(200);
  auto result = run(remote->run(r, nullptr));
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.signal, SIGTERM);
}

TEST_F(Helper, SomethingElseAnsweringIsNotTakenForTheHelper) {
  std::string why;
  EXPECT_FALSE(HelperClient::start(ioc.get_executor(), {"sh", "-c", "echo 'sh: 1: openvaala: Permission denied' >&2; exit 126"},
                                   std::chrono::seconds(5), why));
  EXPECT_EQ(why, "sh: 1: openvaala: Permission denied") << "its last words say why";
  EXPECT_FALSE(HelperClient::start(ioc.get_executor(), {"sh", "-c", "echo hello; sleep 5"}, std::chrono::seconds(5), why));
}

namespace {

class SshExecutorWithHelper : public SshExecutor {
 protected:
  SshExecutorWithHelper() {
    config.helper = true;
    ::setenv("OPENVAALA_HELPER_BINARY", OPENVAALA_BINARY, 1);
  }
  fs::path helper_there() {
    std::string why;
    auto binary = runtime::executors::helper_binary(why);
    return home / runtime::executors::remote_helper_path(binary ? binary->hash : "?");
  }
};

}  // namespace

TEST_F(SshExecutorWithHelper, IsCopiedOnceThenEveryOperationGoesOverOneChannel) {
  write_text(home / "work" / "a.txt", "remote text\n");
  EXPECT_EQ(run(ex().working_directory(nullptr)), (home / "work").string());
  EXPECT_TRUE(fs::exists(helper_there())) << "copied to ~/.cache/openvaala/bin/<hash>/openvaala there";
  const auto after_connect = calls().size();
  EXPECT_EQ(after_connect, 3u) << "probe, copy, start";
  EXPECT_EQ(run(ex().read_file("a.txt", nullptr)), "remote text\n") << "relative to the working directory";
  run(ex().write_file("b.txt", "written", nullptr));
  EXPECT_TRUE(run(ex().stat("b.txt", nullptr)).exists);
  run(ex().remove_file("b.txt", nullptr));
  EXPECT_EQ(bash("echo \"$OV_GREETING\" from $(pwd)").output, "hello there from " + (home / "work").string() + "\n")
      << "commands run in the working directory with the executor's env";
  EXPECT_EQ(calls().size(), after_connect) << "no ssh process per operation once the helper runs";
  EXPECT_EQ(ex().take_notice(), std::nullopt) << "nothing to tell while the helper runs";
  executor->shutdown();
  executor.reset();
  run(ex().working_directory(nullptr));
  std::size_t commands = 0;  // not counting `ssh -O exit` of the shutdown
  for (const auto& c : calls()) commands += std::find(c.begin(), c.end(), "-O") == c.end();
  EXPECT_EQ(commands, after_connect + 2) << "a build that is there is not copied again: probe, start";
}

TEST_F(SshExecutorWithHelper, WhereItCannotBeCopiedEachOperationIsACommandAndTheUserIsToldOnce) {
  write_text(home / ".cache", "a file where the cache folder would be");
  write_text(home / "work" / "a.txt", "still read\n");
  EXPECT_EQ(run(ex().read_file("a.txt", nullptr)), "still read\n");
  auto notice = ex().take_notice();
  ASSERT_TRUE(notice);
  EXPECT_NE(notice->find("cannot copy it there"), std::string::npos) << *notice;
  EXPECT_EQ(ex().take_notice(), std::nullopt) << "said once";
}

TEST_F(SshExecutorWithHelper, ALostHelperIsALostConnectionAndTheNextCallStartsItAgain) {
  write_text(home / "work" / "a.txt", "x");
  run(ex().working_directory(nullptr));
  std::string running_error;
  bool running_done = false;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        RunRequest r;
        r.command = "echo $$ > pid; sleep 30";
        try {
          co_await ex().run(std::move(r), nullptr);
        } catch (const runtime::ExecutorError& e) {
          running_error = e.what();
        }
        running_done = true;
      },
      asio::detached);
  ioc.restart();  // run() left it stopped
  ioc.run_for(std::chrono::milliseconds(50));
  ASSERT_GT(pid_from(home / "work" / "pid"), 0);
  // "[.]": the pattern must not match the shell that runs pkill.
  ASSERT_EQ(std::system(("pkill -KILL -f '" + home.string() + "/[.]cache/openvaala/bin'").c_str()), 0);
  for (int i = 0; i < 500 && !running_done; ++i) ioc.run_for(std::chrono::milliseconds(10));
  EXPECT_NE(running_error.find("the command: the connection was lost"), std::string::npos)
      << "a command running when the helper dies is told so, not given an empty answer: " << running_error;
  EXPECT_EQ(run(ex().read_file("a.txt", nullptr)), "x") << "the next call connects and starts the helper again";
}
