// The approval policy as a table: every mode × what the tool does × a hook's allow × an
// earlier "always" answer, and what each answer of the user means.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "runtime/agent/approval.hpp"
#include "runtime/agent/containment.hpp"

using runtime::Mode;
using runtime::PermissionAnswer;
using runtime::approval::Verdict;
using runtime::tools::Permission;

namespace {

struct Row {
  Mode mode;
  Permission permission;
  bool hook_allowed;
  std::optional<bool> remembered;
  Verdict expected;
  const char* promise;
};

const char* name(Verdict v) {
  switch (v) {
    case Verdict::Allow: return "allow";
    case Verdict::Reject: return "reject";
    case Verdict::Ask: return "ask";
    case Verdict::Forbid: return "forbid";
    case Verdict::Cancelled: return "cancelled";
  }
  return "?";
}

}  // namespace

TEST(Approval, DecisionTable) {
  constexpr auto A = Verdict::Allow, R = Verdict::Reject, Q = Verdict::Ask;
  const std::optional<bool> none, always_allow = true, always_reject = false;
  const Row rows[] = {
      // What needs no permission (reads, plans) runs in every mode.
      {Mode::Default, Permission::None, false, none, A, "a read never asks"},
      {Mode::ReadOnly, Permission::None, false, none, A, "read only still reads"},
      {Mode::AcceptEdits, Permission::None, false, always_reject, A, "a read ignores remembered answers"},
      // Ask: edits and commands ask, unless a hook allowed or the user answered "always".
      {Mode::Default, Permission::Edit, false, none, Q, "Ask asks before an edit"},
      {Mode::Default, Permission::Execute, false, none, Q, "Ask asks before a command"},
      {Mode::Default, Permission::Execute, true, none, A, "a PreToolUse allow skips the prompt"},
      {Mode::Default, Permission::Execute, false, always_allow, A, "always allow is remembered"},
      {Mode::Default, Permission::Execute, false, always_reject, R, "always reject is remembered as a refusal"},
      {Mode::Default, Permission::Edit, false, always_reject, R, "always reject covers edits too"},
      {Mode::Default, Permission::Execute, true, always_reject, A, "a hook's allow comes before a remembered reject"},
      // Accept edits: edits run, commands ask.
      {Mode::AcceptEdits, Permission::Edit, false, none, A, "Accept edits edits without asking"},
      {Mode::AcceptEdits, Permission::Edit, false, always_reject, A, "Accept edits edits even after always reject"},
      {Mode::AcceptEdits, Permission::Execute, false, none, Q, "Accept edits asks before a command"},
      {Mode::AcceptEdits, Permission::Execute, false, always_reject, R, "Accept edits keeps a remembered reject"},
      {Mode::AcceptEdits, Permission::Execute, true, none, A, "Accept edits: a hook allow runs the command"},
      // Read only refuses, whatever else said yes.
      {Mode::ReadOnly, Permission::Edit, false, none, R, "Read only refuses edits"},
      {Mode::ReadOnly, Permission::Execute, false, none, R, "Read only refuses commands"},
      {Mode::ReadOnly, Permission::Execute, true, always_allow, R, "Read only beats a hook allow and always allow"},
      // Full auto asks nothing.
      {Mode::FullAuto, Permission::Edit, false, none, A, "Full auto edits"},
      {Mode::FullAuto, Permission::Execute, false, none, A, "Full auto runs commands"},
      {Mode::FullAuto, Permission::Execute, false, always_reject, A, "Full auto ignores remembered rejects"},
  };
  for (const auto& r : rows) {
    auto got = runtime::approval::decide({r.mode, r.permission, r.hook_allowed, r.remembered});
    EXPECT_EQ(got, r.expected) << r.promise << ": got " << name(got) << ", expected " << name(r.expected);
  }
}

// "Always allow" never opens the config root, an edit outside or the credentials file (issue 40
// R2); a read outside is remembered by its folder (issue 36), so that answer is for the place; a
// remembered refusal holds everywhere.
TEST(Approval, AnAlwaysAllowCoversTheRootsOnly) {
  using runtime::containment::Place;
  constexpr auto A = Verdict::Allow, R = Verdict::Reject, Q = Verdict::Ask, F = Verdict::Forbid;
  struct PlaceRow {
    Mode mode;
    Permission permission;
    std::optional<bool> remembered;
    Place place;
    Verdict expected;
    const char* promise;
  };
  const PlaceRow rows[] = {
      {Mode::Default, Permission::Edit, true, Place::Inside, A, "always allow covers an edit inside"},
      {Mode::Default, Permission::Edit, true, Place::ConfigRoot, Q, "always allow never covers the config root"},
      {Mode::Default, Permission::Edit, true, Place::Outside, Q, "always allow never covers an edit outside"},
      {Mode::Default, Permission::Read, true, Place::Outside, A,
       "a read outside answered \"always\" for its folder (the key is the folder) runs"},
      {Mode::Default, Permission::Read, false, Place::Outside, R, "always reject holds for a read outside"},
      {Mode::Default, Permission::Read, true, Place::Credentials, F, "no answer opens the credentials file to a read"},
      {Mode::AcceptEdits, Permission::Edit, true, Place::ConfigRoot, Q, "nor in Accept edits"},
      {Mode::AcceptEdits, Permission::Edit, true, Place::Outside, Q, "nor outside in Accept edits"},
      {Mode::Default, Permission::Edit, true, Place::Credentials, F, "nor the credentials file"},
      {Mode::Default, Permission::Edit, false, Place::Outside, R, "always reject holds outside too"},
      {Mode::Default, Permission::Edit, false, Place::ConfigRoot, R, "always reject holds in the config root"},
      {Mode::FullAuto, Permission::Edit, std::nullopt, Place::ConfigRoot, A, "Full auto still edits the config root"},
  };
  for (const auto& r : rows) {
    auto got = runtime::approval::decide({r.mode, r.permission, false, r.remembered, r.place});
    EXPECT_EQ(got, r.expected) << r.promise << ": got " << name(got) << ", expected " << name(r.expected);
  }
}

TEST(Approval, WhatEachAnswerMeans) {
  using runtime::approval::interpret;
  EXPECT_EQ(interpret(PermissionAnswer::AllowOnce).verdict, Verdict::Allow);
  EXPECT_FALSE(interpret(PermissionAnswer::AllowOnce).remember) << "allow once is not remembered";
  EXPECT_EQ(interpret(PermissionAnswer::AllowAlways).verdict, Verdict::Allow);
  EXPECT_EQ(interpret(PermissionAnswer::AllowAlways).remember, std::optional<bool>(true)) << "allow always is remembered as allowed";
  EXPECT_EQ(interpret(PermissionAnswer::RejectOnce).verdict, Verdict::Reject);
  EXPECT_FALSE(interpret(PermissionAnswer::RejectOnce).remember) << "reject once is not remembered";
  EXPECT_EQ(interpret(PermissionAnswer::RejectAlways).verdict, Verdict::Reject);
  EXPECT_EQ(interpret(PermissionAnswer::RejectAlways).remember, std::optional<bool>(false))
      << "reject always must be remembered as a refusal, never as an allow";
  EXPECT_EQ(interpret(PermissionAnswer::Cancelled).verdict, Verdict::Cancelled)
      << "a cancelled prompt is not the user's rejection";
  EXPECT_FALSE(interpret(PermissionAnswer::Cancelled).remember);
}

// Containment (DESIGN §11) as a table: where a path lies, after resolving `..` and symlinks,
// decides whether a read or an edit asks, in every mode. The tree is real, so the symlink and
// `..` rows test resolution, not spelling:
//   <tmp>/ws/                 the session's folder
//   <tmp>/ws/link -> ../out   a symlinked folder inside it that leads out
//   <tmp>/ws/cfg/             the config root, inside the session's folder
//   <tmp>/ws/cfg/credentials.yaml, <tmp>/ws/keys -> cfg/credentials.yaml
//   <tmp>/out/                outside every root
//   <tmp>/skills/s/SKILL.md   a skill the session sees (a root for reading)
namespace {

namespace fs = std::filesystem;
using runtime::containment::Access;
using runtime::containment::Place;

class ContainmentTable : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() / ("ov-contain-" + std::to_string(::getpid()));
    fs::remove_all(tmp_);
    for (auto d : {"ws/cfg", "out", "skills/s"}) fs::create_directories(tmp_ / d);
    for (auto f : {"ws/a.txt", "ws/cfg/credentials.yaml", "ws/cfg/mcp_tokens.json", "ws/cfg/hooks.yaml", "out/x.txt",
                   "skills/s/SKILL.md"})
      std::ofstream(tmp_ / f) << "text\n";
    fs::create_directory_symlink("../out", tmp_ / "ws/link");
    fs::create_symlink("cfg/credentials.yaml", tmp_ / "ws/keys");
    scope_.roots = {tmp_ / "ws"};
    scope_.read_roots = {tmp_ / "skills/s"};
    runtime::containment::guard_config_root(scope_, tmp_ / "ws/cfg");
  }
  void TearDown() override { fs::remove_all(tmp_); }

  // The path as a tool hands it over: absolute, lexically normal (runtime::tools::resolve_path).
  fs::path at(const char* rel) const { return (tmp_ / "ws" / rel).lexically_normal(); }

  fs::path tmp_;
  runtime::containment::Scope scope_;
};

struct PathRow {
  Permission permission;
  const char* path;  // relative to the session's folder
  Verdict in_ask, in_accept_edits, in_read_only, in_full_auto;
  const char* promise;
};

}  // namespace

TEST_F(ContainmentTable, WhereAPathLiesDecidesInEveryMode) {
  constexpr auto A = Verdict::Allow, R = Verdict::Reject, Q = Verdict::Ask, F = Verdict::Forbid;
  const auto Read = Permission::Read, Edit = Permission::Edit;
  const PathRow rows[] = {
      //                                     Ask Acc RO  Full
      {Read, "a.txt", A, A, A, A, "a read inside the session's folder never asks"},
      {Read, "../out/x.txt", Q, Q, Q, A, "a read outside the roots asks (Full auto asks nothing)"},
      {Read, "link/x.txt", Q, Q, Q, A, "a read through a symlinked folder that leads out asks"},
      {Read, "sub/../../out/x.txt", Q, Q, Q, A, "a `..` escape is judged after resolving it"},
      {Read, "../skills/s/SKILL.md", A, A, A, A, "a skill's folder stays readable without asking"},
      {Read, "cfg/hooks.yaml", A, A, A, A, "reading the config root inside the session's folder is a read inside"},
      {Read, "cfg/credentials.yaml", F, F, F, F, "no tool reads the credentials file, in any mode"},
      {Read, "keys", F, F, F, F, "nor through a symlink to it"},
      {Read, "cfg/mcp_tokens.json", F, F, F, F, "no tool reads the MCP token file, in any mode"},
      {Read, "/proc/self/environ", F, F, F, F, "no tool reads a process's environment (it holds the keys)"},
      {Read, "/proc/thread-self/environ", F, F, F, F, "nor a thread's"},
      {Read, "/proc/1/environ", F, F, F, F, "nor another process's"},
      {Edit, "a.txt", Q, A, R, A, "an edit inside asks only in Ask"},
      {Edit, "new/b.txt", Q, A, R, A, "a new file inside is an edit inside"},
      {Edit, "../../outside.txt", Q, Q, R, A, "Accept edits asks before an edit outside the roots"},
      {Edit, "link/x.txt", Q, Q, R, A, "Accept edits asks before an edit through a symlinked folder"},
      {Edit, "link/new.txt", Q, Q, R, A, "a new file through a symlinked folder is outside too"},
      {Edit, "sub/../../out/x.txt", Q, Q, R, A, "an edit's `..` escape is judged after resolving it"},
      {Edit, "../skills/s/SKILL.md", Q, Q, R, A, "a skill's folder is a root for reading only"},
      {Edit, "cfg/hooks.yaml", Q, Q, R, A, "an edit in the config root asks even inside a root"},
      {Edit, "cfg/credentials.yaml", F, F, F, F, "no tool writes the credentials file, in any mode"},
      {Edit, "keys", F, F, F, F, "nor through a symlink to it"},
      {Edit, "cfg/mcp_tokens.json", F, F, F, F, "no tool writes the MCP token file, in any mode"},
  };
  for (const auto& r : rows) {
    auto access = r.permission == Permission::Read ? Access::Read : Access::Write;
    Place place = runtime::containment::classify(scope_, access, {at(r.path)});
    const std::pair<Mode, Verdict> modes[] = {{Mode::Default, r.in_ask},
                                              {Mode::AcceptEdits, r.in_accept_edits},
                                              {Mode::ReadOnly, r.in_read_only},
                                              {Mode::FullAuto, r.in_full_auto}};
    for (auto [mode, expected] : modes) {
      auto got = runtime::approval::decide({mode, r.permission, false, std::nullopt, place});
      EXPECT_EQ(got, expected) << r.promise << " (" << r.path << ", mode " << runtime::mode_id(mode) << "): got "
                               << name(got) << ", expected " << name(expected);
    }
  }
}

TEST_F(ContainmentTable, ACallIsJudgedByItsMostGuardedPath) {
  auto place = runtime::containment::classify(scope_, Access::Write, {at("a.txt"), at("../out/x.txt")});
  EXPECT_EQ(place, Place::Outside) << "a patch that edits one file inside and one outside is an edit outside";
  place = runtime::containment::classify(scope_, Access::Write, {at("../out/x.txt"), at("keys"), at("a.txt")});
  EXPECT_EQ(place, Place::Credentials) << "one credentials path among others forbids the whole call";
}

TEST_F(ContainmentTable, HookAllowAndAlwaysAnswersNeverOpenTheCredentialsFile) {
  auto got = runtime::approval::decide({Mode::FullAuto, Permission::Read, true, true, Place::Credentials});
  EXPECT_EQ(got, Verdict::Forbid) << "neither a hook's allow nor 'always allow' reaches the credentials file";
}

// Approvals per key (issue 36): a call is covered by earlier "always" answers only when every one
// of its keys was allowed; a refusal of any key refuses it; a call without keys is never covered.
TEST(Approval, AnAlwaysAnswerCoversACallOnlyForEveryKey) {
  using runtime::approval::remembered;
  const std::map<std::string, bool> answers{{"bash:npm test", true}, {"bash:git status", true}, {"bash:rm", false}};
  const std::optional<bool> none;
  struct KeyRow {
    std::vector<std::string> keys;
    std::optional<bool> expected;
    const char* promise;
  };
  const KeyRow rows[] = {
      {{"bash:npm test"}, true, "the same command runs unasked"},
      {{"bash:npm install"}, none, "another subcommand of the same program is asked"},
      {{"bash:npm test", "bash:git status"}, true, "a compound command whose every part was allowed runs"},
      {{"bash:npm test", "bash:curl"}, none, "one part never answered: asked"},
      {{"bash:npm test", "bash:rm"}, false, "one part always rejected: refused"},
      {{}, none, "a call without keys is never covered"},
  };
  for (const auto& r : rows) EXPECT_EQ(remembered(answers, r.keys), r.expected) << r.promise;
}

// What an "always" answer is remembered by (issue 36): the keys and how the option names them.
TEST(Approval, WhatAnAnswerIsRememberedBy) {
  using runtime::approval::memory_of;
  using runtime::containment::Place;
  using Paths = std::vector<std::filesystem::path>;
  using Keys = std::vector<std::string>;
  const Paths roots{"/w", "/extra"};
  auto request = [](Permission p, Paths paths, Keys keys = {}, std::string label = {}) {
    runtime::tools::ApprovalRequest r;
    r.permission = p;
    r.paths = std::move(paths);
    r.keys = std::move(keys);
    r.keys_label = std::move(label);
    return r;
  };
  struct KeyRow {
    runtime::tools::ApprovalRequest request;
    Place place;
    Paths resolved;
    Keys keys;
    std::string label;
    const char* promise;
  };
  const KeyRow rows[] = {
      {request(Permission::Execute, {}, {"bash:npm test"}, "`npm test`"), Place::Inside, {}, {"bash:npm test"}, "`npm test`",
       "a command by the keys it declares"},
      {request(Permission::Edit, {"/w/a.txt", "/w/sub/b.txt"}), Place::Inside, {}, {"edit:/w"}, "edits in this workspace",
       "edits inside by their root, the working directory named as the workspace"},
      {request(Permission::Edit, {"/extra/x", "/w/y"}), Place::Inside, {}, {"edit:/extra", "edit:/w"},
       "edits in /extra, this workspace", "edits in two roots by both"},
      {request(Permission::Edit, {"/elsewhere/x"}), Place::Outside, {}, {}, "", "an edit outside is never remembered"},
      {request(Permission::Edit, {"/w/.config/x"}), Place::ConfigRoot, {}, {}, "", "an edit in the config root is never remembered"},
      {request(Permission::Read, {"/etc/nginx/a.conf"}), Place::Outside, {"/etc/nginx/a.conf", "/etc/nginx/b.conf", "/opt/x/y"},
       {"read:/etc/nginx", "read:/opt/x"}, "reads in /etc/nginx, /opt/x", "reads outside by the folders of their resolved files"},
      {request(Permission::Read, {"/link/a"}), Place::Outside, {}, {}, "", "a read outside that was not resolved is not remembered"},
      {request(Permission::Read, {"/w/a"}), Place::Inside, {"/w/a"}, {}, "", "a read inside asks nothing: no key"},
  };
  for (const auto& r : rows) {
    const auto m = memory_of(r.request, r.place, roots, r.resolved);
    EXPECT_EQ(m.keys, r.keys) << r.promise;
    EXPECT_EQ(m.label, r.label) << r.promise;
  }
}
