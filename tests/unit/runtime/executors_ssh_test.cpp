// The `ssh` executor (DESIGN §10) with its per-operation scripts (`helper: false`; the helper is
// executors_helper_test.cpp's), against the fake `ssh` of fake_ssh_fixture.hpp.
#include "fake_ssh_fixture.hpp"

using namespace executor_test;

TEST_F(SshExecutor, TheCommandLineCarriesTheUsersOptionsFirstThenBatchModeAndOneSharedConnection) {
  EXPECT_EQ(ex().info().where, "me@devbox:2222");
  run(ex().working_directory(nullptr));
  auto c = calls();
  ASSERT_EQ(c.size(), 1u) << "one ssh call to connect";
  const std::vector<std::string> expected = {
      "-o", "ProxyJump=bastion", "-o", "BatchMode=yes", "-o", "ControlMaster=auto", "-o", "ControlPersist=yes",
      "-o", "ConnectTimeout=15", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3",
      "-o", "ControlPath=" + (dir / "control" / "box").string(), "-p", "2222", "-l", "me",
      "-i", (dir / "id_test").string(), "devbox"};
  ASSERT_GE(c[0].size(), expected.size() + 1);
  EXPECT_EQ(std::vector<std::string>(c[0].begin(), c[0].begin() + expected.size()), expected)
      << "the user's -o first (ssh keeps the first value), BatchMode (never a prompt), one ControlMaster per executor: "
      << joined(c[0]);
  EXPECT_EQ(c[0].size(), expected.size() + 1) << "then one remote command: " << joined(c[0]);
}

TEST_F(SshExecutor, ConnectingLearnsTheWorkingDirectoryOnce) {
  EXPECT_EQ(run(ex().working_directory(nullptr)), (home / "work").string()) << "`~/work` is in the remote home";
  EXPECT_EQ(run(ex().working_directory(nullptr)), (home / "work").string());
  EXPECT_EQ(calls().size(), 1u) << "the second use must not connect again";
}

TEST_F(SshExecutor, AMissingWorkingDirectoryIsNamed) {
  config.workdir = "~/nowhere";
  EXPECT_TRUE(contains(error([&] { run(ex().working_directory(nullptr)); }),
                       "executor 'box' (ssh me@devbox:2222): the working directory '~/nowhere' does not exist there"));
}

TEST_F(SshExecutor, SshsOwnFailuresAreToldInWordsAUserCanActOn) {
  const std::pair<const char*, const char*> cases[] = {
      {"ssh: connect to host devbox port 2222: Connection refused\n", "cannot connect: connection refused"},
      {"me@devbox: Permission denied (publickey).\n", "authentication refused (me@devbox: Permission denied (publickey).)"},
      {"Host key verification failed.\n", "the host key is not trusted: add it to ~/.ssh/known_hosts"},
      {"ssh: Could not resolve hostname devbox: Name or service not known\n", "host name 'devbox' does not resolve"},
  };
  for (const auto& [stderr_text, told] : cases) {
    executor.reset();
    fail_as_ssh(stderr_text);
    EXPECT_TRUE(contains(error([&] { run(ex().working_directory(nullptr)); }), told)) << stderr_text;
  }
}

TEST_F(SshExecutor, FilesAreReadWrittenAndLookedAtInTheWorkingDirectory) {
  write_text(home / "work" / "a.txt", "remote text\n");
  EXPECT_EQ(run(ex().read_file("a.txt", nullptr)), "remote text\n");
  run(ex().write_file("sub/b.txt", "written there", nullptr));
  EXPECT_EQ(read_text(home / "work" / "sub" / "b.txt"), "written there") << "folders are made, relative to the workdir";
  auto f = run(ex().stat("a.txt", nullptr));
  EXPECT_TRUE(f.exists);
  EXPECT_FALSE(f.is_directory);
  EXPECT_EQ(f.size, 12u);
  EXPECT_TRUE(run(ex().stat("sub", nullptr)).is_directory);
  EXPECT_FALSE(run(ex().stat("none", nullptr)).exists);
  run(ex().remove_file("sub/b.txt", nullptr));
  EXPECT_FALSE(fs::exists(home / "work" / "sub" / "b.txt"));
  EXPECT_TRUE(contains(error([&] { run(ex().read_file("none.txt", nullptr)); }), "executor 'box' (ssh me@devbox:2222): cannot read none.txt"));
}

TEST_F(SshExecutor, AWriteIsAtomicAndKeepsTheFilesMode) {
  write_text(home / "work" / "secret", "old");
  fs::permissions(home / "work" / "secret", fs::perms(0600));
  run(ex().write_file("secret", "new", nullptr));
  EXPECT_EQ(read_text(home / "work" / "secret"), "new");
  EXPECT_EQ(mode_of(home / "work" / "secret"), 0600u) << "rewriting a file there must not widen its mode";
  for (const auto& e : fs::directory_iterator(home / "work"))
    EXPECT_FALSE(contains(e.path().filename().string(), ".openvaala.")) << "no temp file left: " << e.path();
}

TEST_F(SshExecutor, ReadsOnlyRegularFiles) {
  ASSERT_EQ(::mkfifo((home / "work" / "pipe").c_str(), 0644), 0);
  EXPECT_TRUE(contains(error([&] { run(ex().read_file("pipe", nullptr)); }), "it is not a regular file"))
      << "a FIFO there would hold the call until cancelled";
}

TEST_F(SshExecutor, CommandsRunInTheWorkingDirectoryWithTheExecutorsEnvironment) {
  auto r = bash("pwd; echo \"$OV_GREETING\"; echo oops >&2; exit 7");
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.output, (home / "work").string() + "\nhello there\noops\n")
      << "stderr is merged into the output; the wrapper's own OVEXIT line is not the command's";
}

TEST_F(SshExecutor, CommandsNeverRunThereUnconfined) {
  RunRequest r;
  r.command = "touch " + (home / "ran").string();
  r.wrapper = {"sandbox-helper"};
  EXPECT_TRUE(contains(error([&] { run(ex().run(std::move(r), nullptr)); }), "commands cannot run in the sandbox on ssh executors"));
  EXPECT_FALSE(fs::exists(home / "ran"));
}

TEST_F(SshExecutor, AConnectionLostMidCommandIsAnErrorNotAnExitStatus) {
  run(ex().working_directory(nullptr));
  fail_as_ssh("Connection to devbox closed by remote host.\n");
  auto told = error([&] { bash("echo never"); });
  EXPECT_TRUE(contains(told, "the connection was lost while the command ran")) << told;
}

TEST_F(SshExecutor, InstallFileWritesOnlyWhatChanged) {
  auto first = run(ex().install_file("~/hooks/h.sh", "#!/bin/sh\necho hi\n", 0755, nullptr));
  EXPECT_TRUE(first.written);
  EXPECT_EQ(first.path, (home / "hooks" / "h.sh").string()) << "`~/x` is in the remote home";
  EXPECT_EQ(read_text(home / "hooks" / "h.sh"), "#!/bin/sh\necho hi\n");
  EXPECT_EQ(mode_of(home / "hooks" / "h.sh"), 0755u);
  EXPECT_FALSE(run(ex().install_file("~/hooks/h.sh", "#!/bin/sh\necho hi\n", 0755, nullptr)).written)
      << "an identical file (content and mode) is not written again";
  EXPECT_TRUE(run(ex().install_file("~/hooks/h.sh", "#!/bin/sh\necho hi\n", 0700, nullptr)).written) << "a new mode is";
  EXPECT_EQ(mode_of(home / "hooks" / "h.sh"), 0700u);
  EXPECT_TRUE(run(ex().install_file("~/hooks/h.sh", "#!/bin/sh\necho bye\n", 0700, nullptr)).written) << "new content is";
}

TEST_F(SshExecutor, CopyTreeCopiesAFolderOnce) {
  write_text(dir / "skill" / "SKILL.md", "steps\n");
  write_text(dir / "skill" / "lib" / "x.py", "print(1)\n");
  auto at = run(ex().copy_tree((dir / "skill").string(), "~/skills/s-1", nullptr));
  EXPECT_EQ(at, (home / "skills" / "s-1").string());
  EXPECT_EQ(read_text(home / "skills" / "s-1" / "lib" / "x.py"), "print(1)\n");
  fs::remove(dir / "skill" / "SKILL.md");
  EXPECT_EQ(run(ex().copy_tree((dir / "skill").string(), "~/skills/s-1", nullptr)), at);
  EXPECT_TRUE(fs::exists(home / "skills" / "s-1" / "SKILL.md")) << "a folder already there (named by its hash) is kept";
}

TEST_F(SshExecutor, RealPathsAreResolvedThereWithTheConfigRootLast) {
  fs::create_directories(home / "work" / "real");
  fs::create_directory_symlink(home / "work" / "real", home / "work" / "link");
  auto& paths = dynamic_cast<runtime::ExecutorPaths&>(ex());
  auto r = run(paths.real_paths({"link/f.txt", "plain"}, nullptr));
  ASSERT_EQ(r.paths.size(), 2u);
  EXPECT_EQ(r.paths[0], (home / "work" / "real" / "f.txt").string()) << "symlinks resolved there, relative to the workdir";
  EXPECT_EQ(r.paths[1], (home / "work" / "plain").string());
  EXPECT_EQ(r.config_root, (home / ".config" / "openvaala").string());
}

TEST_F(SshExecutor, LaunchArgvRunsTheCommandThereInTheWorkingDirectory) {
  EXPECT_THROW((void)ex().launch_argv("true", {}), runtime::ExecutorError) << "not before connecting";
  run(ex().working_directory(nullptr));
  auto argv = ex().launch_argv("echo \"$OV_GREETING $EXTRA\"; pwd", {{"EXTRA", "and more"}});
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv.front(), "ssh");
  EXPECT_EQ(argv[argv.size() - 2], "devbox");
  // Run it as a hook would be: the fake ssh is first on PATH.
  std::string out;
  {
    std::string cmd;
    for (const auto& a : argv) cmd += runtime::executors::shell_quote(a) + " ";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    char buf[256];
    while (auto n = ::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    ::pclose(p);
  }
  EXPECT_EQ(out, "hello there and more\n" + (home / "work").string() + "\n");
}

TEST_F(SshExecutor, ForwardingIsOnTheSharedConnectionOncePerDestination) {
  auto local = run(ex().forward_tcp("db.internal", "5432", nullptr));
  EXPECT_TRUE(local.rfind("127.0.0.1:", 0) == 0) << local;
  EXPECT_EQ(run(ex().forward_tcp("db.internal", "5432", nullptr)), local);
  auto c = calls();
  ASSERT_EQ(c.size(), 2u) << "connect, then one forward for both asks";
  auto line = joined(c[1]);
  EXPECT_TRUE(contains(line, "-O forward -L " + local + ":db.internal:5432 devbox")) << line;
  auto v6 = run(ex().forward_tcp("::1", "80", nullptr));
  EXPECT_TRUE(contains(joined(calls().back()), "-L " + v6 + ":[::1]:80 ")) << "IPv6 in brackets";
}

TEST_F(SshExecutor, ShutdownClosesTheConnectionItOpened) {
  ex().shutdown();
  EXPECT_TRUE(calls().empty()) << "nothing to close before the first connection";
  run(ex().working_directory(nullptr));
  ex().shutdown();
  auto c = calls();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_TRUE(contains(joined(c[1]), "-O exit devbox")) << joined(c[1]);
}
