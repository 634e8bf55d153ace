// The approval policy as a table: every mode × what the tool does × a hook's allow × an
// earlier "always" answer, and what each answer of the user means.
#include <gtest/gtest.h>

#include "runtime/agent/approval.hpp"

using runtime::Mode;
using runtime::PermissionAnswer;
using runtime::approval::Verdict;
using runtime::tools::Authorization;
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

const char* name(Verdict v) { return v == Verdict::Allow ? "allow" : v == Verdict::Reject ? "reject" : "ask"; }

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

TEST(Approval, WhatEachAnswerMeans) {
  using runtime::approval::interpret;
  EXPECT_EQ(interpret(PermissionAnswer::AllowOnce).authorization, Authorization::Allowed);
  EXPECT_FALSE(interpret(PermissionAnswer::AllowOnce).remember) << "allow once is not remembered";
  EXPECT_EQ(interpret(PermissionAnswer::AllowAlways).authorization, Authorization::Allowed);
  EXPECT_EQ(interpret(PermissionAnswer::AllowAlways).remember, std::optional<bool>(true)) << "allow always is remembered as allowed";
  EXPECT_EQ(interpret(PermissionAnswer::RejectOnce).authorization, Authorization::Rejected);
  EXPECT_FALSE(interpret(PermissionAnswer::RejectOnce).remember) << "reject once is not remembered";
  EXPECT_EQ(interpret(PermissionAnswer::RejectAlways).authorization, Authorization::Rejected);
  EXPECT_EQ(interpret(PermissionAnswer::RejectAlways).remember, std::optional<bool>(false))
      << "reject always must be remembered as a refusal, never as an allow";
  EXPECT_EQ(interpret(PermissionAnswer::Cancelled).authorization, Authorization::Cancelled)
      << "a cancelled prompt is not the user's rejection";
  EXPECT_FALSE(interpret(PermissionAnswer::Cancelled).remember);
}
