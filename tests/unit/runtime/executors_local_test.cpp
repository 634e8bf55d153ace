// The `local` executor (DESIGN §10): paths relative to the session's folder, atomic writes that
// keep a file's mode, errors naming the file, and `bash -c` in that folder with stderr merged,
// the sandbox wrapper in front, output cut to its last bytes and a timeout.
#include <sys/stat.h>

#include "executor_test_util.hpp"

using namespace executor_test;
using runtime::RunRequest;
using runtime::executors::make_local_executor;

namespace {

class LocalExecutor : public ExecutorTest {
 protected:
  std::shared_ptr<runtime::Executor> ex() { return make_local_executor(deps(), dir); }
  runtime::RunResult bash(const std::string& command, RunRequest r = {}) {
    r.command = command;
    return run(ex()->run(std::move(r), nullptr));
  }
};

}  // namespace

TEST_F(LocalExecutor, SaysWhatItIs) {
  auto e = ex();
  EXPECT_EQ(e->info().id, "local");
  EXPECT_EQ(e->info().type, "local");
  EXPECT_TRUE(e->info().can_run);
  EXPECT_FALSE(e->info().read_only);
  EXPECT_EQ(run(e->working_directory(nullptr)), dir.string()) << "its working directory is the session's folder";
}

TEST_F(LocalExecutor, RelativePathsAreInTheSessionFolder) {
  write_text(dir / "sub" / "a.txt", "alpha\n");
  EXPECT_EQ(run(ex()->read_file("sub/a.txt", nullptr)), "alpha\n");
  EXPECT_EQ(run(ex()->read_file((dir / "sub" / "a.txt").string(), nullptr)), "alpha\n");
  run(ex()->write_file("sub/b.txt", "beta", nullptr));
  EXPECT_EQ(read_text(dir / "sub" / "b.txt"), "beta") << "a relative write lands in the session's folder";
}

TEST_F(LocalExecutor, AWriteKeepsTheFilesModeAndANewFileIs0644) {
  write_text(dir / "secret.txt", "old");
  fs::permissions(dir / "secret.txt", fs::perms(0600));
  run(ex()->write_file("secret.txt", "new", nullptr));
  EXPECT_EQ(read_text(dir / "secret.txt"), "new");
  EXPECT_EQ(mode_of(dir / "secret.txt"), 0600u) << "rewriting a file must not widen its mode";
  run(ex()->write_file("fresh.txt", "x", nullptr));
  EXPECT_EQ(mode_of(dir / "fresh.txt"), 0644u);
}

TEST_F(LocalExecutor, ErrorsNameTheFile) {
  EXPECT_NE(error_of(ex()->read_file("missing.txt", nullptr)).find("Cannot read " + (dir / "missing.txt").string()),
            std::string::npos);
  write_text(dir / "full" / "x", "x");
  EXPECT_NE(error_of(ex()->remove_file("full", nullptr)).find("cannot remove " + (dir / "full").string()), std::string::npos)
      << "a folder that is not empty stays, and the error names it";
  write_text(dir / "gone.txt", "x");
  EXPECT_EQ(error_of(ex()->remove_file("gone.txt", nullptr)), "");
  EXPECT_FALSE(fs::exists(dir / "gone.txt"));
}

TEST_F(LocalExecutor, StatTellsFilesFromFolders) {
  write_text(dir / "f.txt", "12345");
  fs::create_directories(dir / "d");
  auto f = run(ex()->stat("f.txt", nullptr));
  EXPECT_TRUE(f.exists);
  EXPECT_FALSE(f.is_directory);
  EXPECT_EQ(f.size, 5u);
  auto d = run(ex()->stat("d", nullptr));
  EXPECT_TRUE(d.exists && d.is_directory);
  EXPECT_FALSE(run(ex()->stat("nothing", nullptr)).exists);
}

TEST_F(LocalExecutor, BashRunsInTheSessionFolderWithStderrMerged) {
  auto r = bash("pwd; echo err >&2; exit 3");
  EXPECT_EQ(r.output, dir.string() + "\nerr\n");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.truncated);
}

TEST_F(LocalExecutor, TheSandboxWrapperRunsBash) {
  RunRequest r;
  r.wrapper = {"env", "OV_WRAPPED=yes"};
  EXPECT_EQ(bash("echo \"$OV_WRAPPED\"", std::move(r)).output, "yes\n") << "bash must run under the wrapper's argv";
}

TEST_F(LocalExecutor, OutputIsCutToItsLastBytesAndStreamed) {
  RunRequest r;
  r.max_output_bytes = 8;
  std::string streamed;
  r.on_output = [&](std::string_view s) { streamed += s; };
  auto res = bash("printf 0123456789abcdef", std::move(r));
  EXPECT_TRUE(res.truncated);
  EXPECT_EQ(res.output, "89abcdef") << "the last bytes are kept";
  EXPECT_EQ(streamed, "0123456789abcdef") << "all of the output reaches on_output as it comes; only the result is cut";
}

TEST_F(LocalExecutor, ATimeoutEndsTheCommand) {
  RunRequest r;
  r.timeout = std::chrono::milliseconds(200);
  auto res = bash("sleep 30", std::move(r));
  EXPECT_TRUE(res.timed_out);
  EXPECT_FALSE(res.exit_code == 0);
}

TEST_F(LocalExecutor, ItRunsProcessesItselfNotThroughALaunchArgv) {
  try {
    (void)ex()->launch_argv("true", {});
    FAIL() << "launch_argv must throw for local";
  } catch (const runtime::ExecutorError& e) {
    EXPECT_NE(std::string(e.what()).find("it runs them itself"), std::string::npos) << e.what();
  }
}
