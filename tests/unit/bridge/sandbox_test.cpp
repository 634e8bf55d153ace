// The sandbox's rules (which paths get which rights) and, in a child process, what they let
// through once applied. The trees live beside the test binary, not in /tmp: the temp folders are
// writable in the sandbox, so "outside" must be elsewhere.
#include "bridge/process/sandbox.hpp"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

using namespace bridge::process::sandbox;

namespace {

class SandboxRules : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::read_symlink("/proc/self/exe").parent_path() / ("sandbox-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    for (const char* d : {"a/x", "b", "home/.config/openvaala/hooks", "home/.config/other", "home/ws/src"})
      fs::create_directories(root_ / d);
    write("home/.bashrc", "rc\n");
    write("home/.config/openvaala/credentials.yaml", "api_key: sk-secret\n");
    write("home/ws/inside.txt", "inside\n");
    fs::create_symlink(root_ / "home/.config/openvaala", root_ / "home/link-to-config");
    root_ = fs::canonical(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& rel, const std::string& text) { std::ofstream(root_ / rel) << text; }
  fs::path p(const std::string& rel) const { return root_ / rel; }

  fs::path root_;
};

std::vector<Rule> sorted(std::vector<Rule> rules) {
  std::sort(rules.begin(), rules.end(), [](const Rule& a, const Rule& b) { return a.path < b.path; });
  return rules;
}

TEST_F(SandboxRules, AGrantWithNothingExceptedIsOneRule) {
  EXPECT_EQ(rules_of({{p("home"), kRead, {p("b")}}}), (std::vector<Rule>{{p("home"), kRead}}));
}

TEST_F(SandboxRules, ReadEverythingButTheConfigRootSplitsAlongItsPathAndSkipsSymlinks) {
  const auto rules = rules_of({{root_, kRead, {p("home/.config/openvaala")}}});
  // The config root's ancestors get no rule of their own (a rule covers everything beneath); their
  // other entries do; the symlink to the config root gets none.
  EXPECT_EQ(sorted(rules), (std::vector<Rule>{{p("a"), kRead},
                                              {p("b"), kRead},
                                              {p("home/.bashrc"), kRead},
                                              {p("home/.config/other"), kRead},
                                              {p("home/ws"), kRead}}));
}

TEST_F(SandboxRules, AWriteRootAroundTheConfigRootIsSplitTooAndRightsOnOnePathMerge) {
  const std::vector<fs::path> deny{p("home/.config/openvaala")};
  // The read grant last: it must not take back what the write grants gave.
  const auto rules = rules_of({{p("home"), kReadWrite, deny}, {p("home/ws"), kReadWrite, deny}, {root_, kRead, deny}});
  EXPECT_EQ(sorted(rules), (std::vector<Rule>{{p("a"), kRead},
                                              {p("b"), kRead},
                                              {p("home/.bashrc"), kReadWrite},
                                              {p("home/.config/other"), kReadWrite},
                                              {p("home/ws"), kReadWrite}}));
}

TEST_F(SandboxRules, AGrantInsideTheConfigRootOrAMissingPathGetsNoRule) {
  EXPECT_EQ(rules_of({{p("home/.config/openvaala/hooks"), kReadWrite, {p("home/.config/openvaala")}},
                      {p("nowhere"), kReadWrite, {}}}),
            std::vector<Rule>{});
}

TEST_F(SandboxRules, ExceptionsAreJudgedResolved) {
  // The config root named through a symlink and `..` is still the config root.
  const auto rules = rules_of({{p("home"), kRead, {p("home/ws/../link-to-config")}}});
  EXPECT_EQ(std::count_if(rules.begin(), rules.end(), [&](const Rule& r) { return r.path == p("home/.config"); }), 0);
  EXPECT_EQ(std::count_if(rules.begin(), rules.end(), [&](const Rule& r) { return r.path == p("home/.config/other"); }), 1);
}

TEST(SandboxGrants, ReadAllButDevWriteRootsTempAndDevicesEachWithTheDenials) {
  Policy policy{{"/work/ws"}, {"/home/me/.config/openvaala"}};
  const auto grants = grants_of(policy);
  ASSERT_FALSE(grants.empty());
  EXPECT_EQ(grants[0].path, "/");
  EXPECT_EQ(grants[0].rights, kRead);
  EXPECT_EQ(grants[0].except, (std::vector<fs::path>{"/dev", "/home/me/.config/openvaala"}));
  auto find = [&](const fs::path& path) {
    return std::find_if(grants.begin(), grants.end(), [&](const Grant& g) { return g.path == path; });
  };
  for (const char* writable : {"/work/ws", "/tmp", "/dev/null", "/dev/tty"}) {
    auto g = find(writable);
    ASSERT_NE(g, grants.end()) << writable;
    EXPECT_EQ(g->rights, kReadWrite) << writable;
    EXPECT_EQ(g->except, std::vector<fs::path>{"/home/me/.config/openvaala"}) << writable;
  }
  EXPECT_EQ(find("/dev"), grants.end());
  EXPECT_EQ(grants.back().path, "/");
  EXPECT_EQ(grants.back().rights, kList) << "every folder can be listed (`ls ~`, `ls /`): names, never contents";
  EXPECT_TRUE(grants.back().except.empty());
  for (const auto& g : grants) EXPECT_NE(g.path, "/home") << "nothing but the write roots and temp folders is writable";
}

TEST(SandboxAbi, RightsTheKernelDoesNotKnowAreNotHandled) {
  constexpr std::uint64_t refer = 1ULL << 13, truncate = 1ULL << 14, ioctl_dev = 1ULL << 15;
  const std::uint64_t v1 = handled_access(1), v2 = handled_access(2), v3 = handled_access(3), v4 = handled_access(4),
                      v5 = handled_access(5), v7 = handled_access(7);
  EXPECT_EQ(v1 & (refer | truncate | ioctl_dev), 0u);
  EXPECT_EQ(v2 & (refer | truncate | ioctl_dev), refer);
  EXPECT_EQ(v3 & (refer | truncate | ioctl_dev), refer | truncate);
  EXPECT_EQ(v4, v3);
  EXPECT_EQ(v5 & (refer | truncate | ioctl_dev), refer | truncate | ioctl_dev);
  EXPECT_EQ(v7, v5);
  EXPECT_EQ(v1 & 0x1fffu, 0x1fffu) << "every right of ABI 1 is handled";
}

TEST(SandboxHelper, ArgvCarriesDenialsAndWriteRootsThenTheSeparator) {
  EXPECT_EQ(helper_argv("/usr/bin/openvaala", {{"/w1", "/w2"}, {"/cfg"}}),
            (std::vector<std::string>{"/usr/bin/openvaala", "sandbox", "--deny", "/cfg", "--write", "/w1", "--write",
                                      "/w2", "--"}));
}

// Applied in a child: each check is one bit of the exit status (0: all as expected).
TEST_F(SandboxRules, AppliedTheConfigRootIsUnreadableAndWritesLandOnlyInTheWriteRoots) {
  if (landlock_abi() < 0) GTEST_SKIP() << unavailable_reason(landlock_abi());
  const Policy policy{{p("home/ws")}, {p("home/.config/openvaala")}};
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Rules made from this tree, not from `/`: only what these grants name is reachable.
    std::vector<Grant> grants{
        {root_, kRead, policy.deny}, {p("home/ws"), kReadWrite, policy.deny}, {root_, kList, {}}};
    if (!restrict_self(rules_of(grants)).empty()) ::_exit(100);
    int bad = 0;
    auto opens = [](const fs::path& path, int flags) {
      const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
      if (fd >= 0) ::close(fd);
      return fd >= 0;
    };
    if (opens(p("home/.config/openvaala/credentials.yaml"), O_RDONLY)) bad |= 1;
    if (opens(p("home/link-to-config/credentials.yaml"), O_RDONLY)) bad |= 2;
    if (opens(p("home/.config/openvaala/new.yaml"), O_WRONLY | O_CREAT)) bad |= 4;
    if (opens(p("home/outside.txt"), O_WRONLY | O_CREAT)) bad |= 8;
    if (!opens(p("home/ws/inside-new.txt"), O_WRONLY | O_CREAT)) bad |= 16;
    if (!opens(p("home/.bashrc"), O_RDONLY)) bad |= 32;
    if (opens(p("home/.bashrc"), O_WRONLY | O_TRUNC)) bad |= 64;
    if (!opens(p("home"), O_RDONLY | O_DIRECTORY)) bad |= 128;  // `ls ~` around the config root
    if (opens(p("home/.config/openvaala/credentials.yaml"), O_RDONLY)) bad |= 1;  // listing is no reading
    ::_exit(bad);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bits: 1 read config, 2 read via symlink, 4 write config, 8 write outside, "
                                       "16 write inside refused, 32 read elsewhere refused, 64 truncate elsewhere, "
                                       "128 a folder above the config root cannot be listed";
  EXPECT_FALSE(fs::exists(p("home/outside.txt")));
  EXPECT_TRUE(fs::exists(p("home/ws/inside-new.txt")));
  std::ifstream rc(p("home/.bashrc"));
  std::string line;
  std::getline(rc, line);
  EXPECT_EQ(line, "rc");
}

}  // namespace
