#include "runtime/tools/apply_patch.hpp"

#include <gtest/gtest.h>

using namespace runtime::tools;

namespace {

using Files = std::map<std::string, std::string>;

Patch parse_ok(std::string_view text) {
  auto r = parse_patch(text);
  if (auto* e = std::get_if<PatchError>(&r)) {
    ADD_FAILURE() << "parse error: " << e->message;
    return {};
  }
  return std::get<Patch>(r);
}

std::string parse_err(std::string_view text) {
  auto r = parse_patch(text);
  if (auto* e = std::get_if<PatchError>(&r)) return e->message;
  ADD_FAILURE() << "expected a parse error";
  return {};
}

std::vector<FileChange> apply_ok(std::string_view text, const Files& files) {
  auto r = compute_patch_changes(parse_ok(text), files);
  if (auto* e = std::get_if<PatchError>(&r)) {
    ADD_FAILURE() << "apply error: " << e->message;
    return {};
  }
  return std::get<std::vector<FileChange>>(r);
}

std::string apply_err(std::string_view text, const Files& files) {
  auto r = compute_patch_changes(parse_ok(text), files);
  if (auto* e = std::get_if<PatchError>(&r)) return e->message;
  ADD_FAILURE() << "expected an apply error";
  return {};
}

// The new text of a single-file update.
std::string updated(std::string_view text, const std::string& path, const std::string& old) {
  auto changes = apply_ok(text, {{path, old}});
  if (changes.size() != 1 || !changes[0].new_text) {
    ADD_FAILURE() << "expected one change with new text";
    return {};
  }
  return *changes[0].new_text;
}

}  // namespace

// ---- parsing ---------------------------------------------------------------------------------

TEST(ApplyPatchParse, AllOperationKinds) {
  Patch p = parse_ok(
      "*** Begin Patch\n"
      "*** Add File: path/add.py\n"
      "+abc\n"
      "+def\n"
      "*** Delete File: path/delete.py\n"
      "*** Update File: path/update.py\n"
      "*** Move to: path/update2.py\n"
      "@@ def f():\n"
      "-    pass\n"
      "+    return 123\n"
      "*** End Patch\n");
  ASSERT_EQ(p.ops.size(), 3u);
  const auto& add = std::get<AddFileOp>(p.ops[0]);
  EXPECT_EQ(add.path, "path/add.py");
  EXPECT_EQ(add.contents, "abc\ndef\n");
  EXPECT_EQ(std::get<DeleteFileOp>(p.ops[1]).path, "path/delete.py");
  const auto& upd = std::get<UpdateFileOp>(p.ops[2]);
  EXPECT_EQ(upd.path, "path/update.py");
  EXPECT_EQ(upd.move_to, "path/update2.py");
  ASSERT_EQ(upd.chunks.size(), 1u);
  EXPECT_EQ(upd.chunks[0].context_headers, std::vector<std::string>{"def f():"});
  EXPECT_EQ(upd.chunks[0].old_lines, std::vector<std::string>{"    pass"});
  EXPECT_EQ(upd.chunks[0].new_lines, std::vector<std::string>{"    return 123"});
  EXPECT_FALSE(upd.chunks[0].is_end_of_file);
  EXPECT_EQ(paths_to_read(p),
            (std::vector<std::string>{"path/add.py", "path/delete.py", "path/update.py"}));
}

TEST(ApplyPatchParse, FirstChunkMayOmitAtAt) {
  Patch p = parse_ok("*** Begin Patch\n*** Update File: f.py\n import foo\n+bar\n*** End Patch");
  const auto& upd = std::get<UpdateFileOp>(p.ops[0]);
  ASSERT_EQ(upd.chunks.size(), 1u);
  EXPECT_TRUE(upd.chunks[0].context_headers.empty());
  EXPECT_EQ(upd.chunks[0].old_lines, std::vector<std::string>{"import foo"});
  EXPECT_EQ(upd.chunks[0].new_lines, (std::vector<std::string>{"import foo", "bar"}));
}

TEST(ApplyPatchParse, EmptyLineInsideChunkIsEmptyContext) {
  Patch p = parse_ok(
      "*** Begin Patch\n*** Update File: f\n@@\n a\n\n-b\n+B\n c\n\n*** End Patch\n");
  const auto& c = std::get<UpdateFileOp>(p.ops[0]).chunks.at(0);
  // The empty line between `a` and `-b` is context; the one before `*** End Patch` separates.
  EXPECT_EQ(c.old_lines, (std::vector<std::string>{"a", "", "b", "c"}));
  EXPECT_EQ(c.new_lines, (std::vector<std::string>{"a", "", "B", "c"}));
}

TEST(ApplyPatchParse, SeveralChunksAndEndOfFile) {
  Patch p = parse_ok(
      "*** Begin Patch\n*** Update File: f\n@@ class A\n-x\n+y\n@@\n-last\n+LAST\n*** End of File\n"
      "*** End Patch");
  const auto& upd = std::get<UpdateFileOp>(p.ops[0]);
  ASSERT_EQ(upd.chunks.size(), 2u);
  EXPECT_FALSE(upd.chunks[0].is_end_of_file);
  EXPECT_TRUE(upd.chunks[1].is_end_of_file);
  EXPECT_TRUE(upd.chunks[1].context_headers.empty());
}

TEST(ApplyPatchParse, ConsecutiveContextHeaders) {
  Patch p = parse_ok("*** Begin Patch\n*** Update File: f\n@@ class A\n@@ def run(self):\n-x\n+y\n"
                     "*** End Patch");
  const auto& c = std::get<UpdateFileOp>(p.ops[0]).chunks.at(0);
  EXPECT_EQ(c.context_headers, (std::vector<std::string>{"class A", "def run(self):"}));
}

TEST(ApplyPatchParse, UnifiedDiffHunkHeaderKeepsOnlyTheHint) {
  Patch p = parse_ok("*** Begin Patch\n*** Update File: f\n@@ -1,2 +1,2 @@ int main()\n-x\n+y\n"
                     "@@ -9 +9 @@\n-z\n+Z\n*** End Patch");
  const auto& upd = std::get<UpdateFileOp>(p.ops[0]);
  EXPECT_EQ(upd.chunks.at(0).context_headers, std::vector<std::string>{"int main()"});
  EXPECT_TRUE(upd.chunks.at(1).context_headers.empty());
}

TEST(ApplyPatchParse, LenientWhitespaceAroundEnvelope) {
  Patch p = parse_ok("\n\n   *** Begin Patch  \n*** Add File: a.txt\n+hi\n  *** End Patch \n\n  ");
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(std::get<AddFileOp>(p.ops[0]).contents, "hi\n");
}

TEST(ApplyPatchParse, HeredocWrapper) {
  for (std::string open : {"<<'EOF'", "<<EOF", "<<\"EOF\""}) {
    Patch p = parse_ok(open + "\n*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch\nEOF\n");
    ASSERT_EQ(p.ops.size(), 1u) << open;
    EXPECT_EQ(std::get<DeleteFileOp>(p.ops[0]).path, "gone.txt");
  }
}

TEST(ApplyPatchParse, CrlfPatch) {
  Patch p = parse_ok(
      "*** Begin Patch\r\n*** Update File: f\r\n@@ head\r\n a\r\n-b\r\n+c\r\n*** End Patch\r\n");
  const auto& c = std::get<UpdateFileOp>(p.ops[0]).chunks.at(0);
  EXPECT_EQ(c.context_headers, std::vector<std::string>{"head"});
  EXPECT_EQ(c.old_lines, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.new_lines, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(updated("*** Begin Patch\r\n*** Update File: f\r\n-b\r\n+c\r\n*** End Patch\r\n", "f",
                    "a\nb\n"),
            "a\nc\n");
}

TEST(ApplyPatchParse, PureRenameNeedsNoChunks) {
  Patch p = parse_ok("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch");
  const auto& upd = std::get<UpdateFileOp>(p.ops[0]);
  EXPECT_EQ(upd.move_to, "b");
  EXPECT_TRUE(upd.chunks.empty());
}

TEST(ApplyPatchParseErrors, BadOperationHeader) {
  EXPECT_EQ(parse_err("*** Begin Patch\n*** Add File: a\nbogus\n*** End Patch"),
            "line 3: expected '*** Add File:', '*** Delete File:' or '*** Update File:', got 'bogus'");
  EXPECT_EQ(parse_err("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch"),
            "line 2: expected '*** Add File:', '*** Delete File:' or '*** Update File:', got "
            "'*** Frobnicate File: a'");
}

TEST(ApplyPatchParseErrors, MissingBegin) {
  EXPECT_EQ(parse_err("\n*** Add File: a\n+x\n*** End Patch"),
            "line 2: expected '*** Begin Patch', got '*** Add File: a'");
  EXPECT_EQ(parse_err(""), "empty patch: expected '*** Begin Patch'");
  EXPECT_EQ(parse_err(" \n\n"), "empty patch: expected '*** Begin Patch'");
}

TEST(ApplyPatchParseErrors, MissingEndPatch) {
  EXPECT_EQ(parse_err("*** Begin Patch\n*** Add File: a\n+x\n"),
            "line 4: expected '*** End Patch', got end of input");
  EXPECT_EQ(parse_err("*** Begin Patch"), "line 2: expected '*** End Patch', got end of input");
  EXPECT_EQ(parse_err("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b"),
            "line 6: expected '*** End Patch', got end of input");
}

TEST(ApplyPatchParseErrors, TextAfterEndPatch) {
  EXPECT_EQ(parse_err("*** Begin Patch\n*** Delete File: a\n*** End Patch\n\nmore"),
            "line 5: unexpected text after '*** End Patch': 'more'");
}

TEST(ApplyPatchParseErrors, EmptyPatch) {
  EXPECT_EQ(parse_err("*** Begin Patch\n*** End Patch"),
            "empty patch: no file operations between '*** Begin Patch' and '*** End Patch'");
}

TEST(ApplyPatchParseErrors, UpdateErrors) {
  EXPECT_EQ(parse_err("*** Begin Patch\n*** Update File: f\n*** End Patch"),
            "line 2: '*** Update File: f' has no changes");
  EXPECT_EQ(parse_err("*** Begin Patch\n*** Update File: f\n@@ x\n*** End Patch"),
            "line 3: chunk of 'f' has no lines");
  EXPECT_EQ(parse_err("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\nbad line\n*** End Patch"),
            "line 6: expected a chunk line starting with ' ', '+' or '-', '@@' or '*** End of File' "
            "in the update of 'f', got 'bad line'");
  EXPECT_EQ(parse_err("*** Begin Patch\n*** Update File: f\n*** End of File\n*** End Patch"),
            "line 3: '*** End of File' must follow the lines of a chunk");
  EXPECT_EQ(parse_err("*** Begin Patch\n*** Update File: f\n-a\n*** End of File\n-b\n*** End Patch"),
            "line 5: expected '@@' before the next chunk of 'f', got '-b'");
  EXPECT_EQ(parse_err("*** Begin Patch\n*** Update File:\n-a\n*** End Patch"),
            "line 2: '*** Update File:' needs a file path");
}

// ---- applying --------------------------------------------------------------------------------

TEST(ApplyPatchApply, AddFile) {
  auto changes = apply_ok("*** Begin Patch\n*** Add File: new.txt\n+one\n+\n+three\n*** End Patch", {});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].path, "new.txt");
  EXPECT_FALSE(changes[0].old_text);
  EXPECT_EQ(changes[0].new_text, "one\n\nthree\n");
  EXPECT_FALSE(changes[0].move_to);
}

TEST(ApplyPatchApply, AddEmptyFile) {
  auto changes = apply_ok("*** Begin Patch\n*** Add File: empty\n*** End Patch", {});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].new_text, "");
}

TEST(ApplyPatchApply, DeleteFile) {
  auto changes = apply_ok("*** Begin Patch\n*** Delete File: old.txt\n*** End Patch",
                          {{"old.txt", "bye\n"}});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].path, "old.txt");
  EXPECT_EQ(changes[0].old_text, "bye\n");
  EXPECT_FALSE(changes[0].new_text);
}

TEST(ApplyPatchApply, SimpleUpdate) {
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: hello.txt\n@@\n foo\n-bar\n+baz\n*** End Patch",
                    "hello.txt", "foo\nbar\nqux\n"),
            "foo\nbaz\nqux\n");
}

TEST(ApplyPatchApply, MoveFile) {
  auto changes = apply_ok(
      "*** Begin Patch\n*** Update File: src/a.txt\n*** Move to: dst/b.txt\n@@\n-line\n+LINE\n"
      "*** End Patch",
      {{"src/a.txt", "line\n"}});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].path, "src/a.txt");
  EXPECT_EQ(changes[0].move_to, "dst/b.txt");
  EXPECT_EQ(changes[0].old_text, "line\n");
  EXPECT_EQ(changes[0].new_text, "LINE\n");
}

TEST(ApplyPatchApply, PureRename) {
  auto changes = apply_ok("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch",
                          {{"a", "same\n"}});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].move_to, "b");
  EXPECT_EQ(changes[0].new_text, "same\n");
}

TEST(ApplyPatchApply, MultipleChunksInOrder) {
  std::string old = "a\nx\nb\nx\nc\nx\n";
  // The second chunk's `x` must be found after the first chunk's position.
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n@@\n b\n-x\n+X1\n@@\n c\n-x\n+X2\n"
                    "*** End Patch",
                    "f", old),
            "a\nx\nb\nX1\nc\nX2\n");
}

TEST(ApplyPatchApply, ContextHeaderSeeksFirst) {
  std::string old =
      "def a():\n    return 1\n\ndef b():\n    return 1\n";
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: m.py\n@@ def b():\n-    return 1\n+    return 2\n"
                    "*** End Patch",
                    "m.py", old),
            "def a():\n    return 1\n\ndef b():\n    return 2\n");
}

TEST(ApplyPatchApply, ConsecutiveContextHeaders) {
  std::string old = "class A:\n  def run():\n    x\nclass B:\n  def run():\n    x\n";
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: m.py\n@@ class B:\n@@   def run():\n-    x\n"
                    "+    y\n*** End Patch",
                    "m.py", old),
            "class A:\n  def run():\n    x\nclass B:\n  def run():\n    y\n");
}

TEST(ApplyPatchApply, EndOfFileMatchesOnlyAtTheEnd) {
  std::string old = "x\nmiddle\nx\n";
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n@@\n-x\n+END\n*** End of File\n*** End Patch",
                    "f", old),
            "x\nmiddle\nEND\n");
  EXPECT_EQ(apply_err("*** Begin Patch\n*** Update File: f\n@@\n-middle\n*** End of File\n*** End Patch",
                      {{"f", old}}),
            "f: hunk 1 does not apply: could not find the lines at the end of the file:\nmiddle");
}

TEST(ApplyPatchApply, PureInsertionAppendsAtEnd) {
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n@@\n+tail1\n+tail2\n*** End Patch", "f",
                    "a\nb\n"),
            "a\nb\ntail1\ntail2\n");
  // Trailing empty lines in the patch are separators, not context, so this is still pure insertion.
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n@@\n+tail\n\n\n*** End Patch", "f",
                    "a\n\nb\n"),
            "a\n\nb\ntail\n");
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n+first\n*** End Patch", "f", ""), "first\n");
}

TEST(ApplyPatchApply, FuzzyTrailingWhitespace) {
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n@@\n foo\n-bar\n+BAR\n*** End Patch", "f",
                    "foo   \nbar\t\n"),
            "foo\nBAR\n");  // as in Codex, the matched lines (context too) take the patch's text
}

TEST(ApplyPatchApply, FuzzyLeadingWhitespace) {
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n@@\n-bar\n+    BAR\n*** End Patch", "f",
                    "  x\n    bar  \n"),
            "  x\n    BAR\n");
}

TEST(ApplyPatchApply, UnicodePunctuationNormalised) {
  // The file has typographic quotes, a non-breaking space and an en dash; the patch has ASCII.
  std::string old = "msg = \xE2\x80\x9CHello\xC2\xA0world \xE2\x80\x93 it\xE2\x80\x99s\xE2\x80\x9D\n";
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n@@\n-msg = \"Hello world - it's\"\n"
                    "+msg = \"hi\"\n*** End Patch",
                    "f", old),
            "msg = \"hi\"\n");
}

TEST(ApplyPatchApply, ExactMatchPreferredOverFuzzy) {
  // `x ` (fuzzy) comes first, `x` (exact) later: the exact one wins.
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n-x\n+y\n*** End Patch", "f", "x \nx\n"),
            "x \ny\n");
}

TEST(ApplyPatchApply, KeepsMissingFinalNewline) {
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n-b\n+c\n*** End Patch", "f", "a\nb"), "a\nc");
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n-b\n+c\n*** End Patch", "f", "a\nb\n"),
            "a\nc\n");
}

TEST(ApplyPatchApply, KeepsCrlfFile) {
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n a\n-b\n+c\n+d\n*** End Patch", "f",
                    "a\r\nb\r\ne\r\n"),
            "a\r\nc\r\nd\r\ne\r\n");
}

TEST(ApplyPatchApply, TrailingEmptyContextLineMayStandForFinalNewline) {
  // ` ` (an empty context line) after the last line: no such line exists, retried without it.
  EXPECT_EQ(updated("*** Begin Patch\n*** Update File: f\n-b\n+c\n \n*** End Patch", "f", "a\nb\n"),
            "a\nc\n");
}

TEST(ApplyPatchApply, LaterOpsSeeEarlierOps) {
  auto changes = apply_ok(
      "*** Begin Patch\n*** Add File: n\n+one\n*** Update File: n\n-one\n+two\n*** End Patch", {});
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].old_text, "one\n");
  EXPECT_EQ(changes[1].new_text, "two\n");
}

// ---- apply errors ----------------------------------------------------------------------------

TEST(ApplyPatchApplyErrors, HunkNotFoundNamesFileAndHunk) {
  EXPECT_EQ(apply_err("*** Begin Patch\n*** Update File: hello.txt\n@@\n-a\n+A\n@@\n foo\n-missing\n"
                      "+x\n*** End Patch",
                      {{"hello.txt", "a\nb\n"}}),
            "hello.txt: hunk 2 does not apply: could not find the lines:\nfoo\nmissing");
}

TEST(ApplyPatchApplyErrors, ChunksMustBeInOrder) {
  // The second chunk's lines only occur before the first chunk's position.
  EXPECT_EQ(apply_err("*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n@@\n-a\n+A\n*** End Patch",
                      {{"f", "a\nb\n"}}),
            "f: hunk 2 does not apply: could not find the lines:\na");
}

TEST(ApplyPatchApplyErrors, ContextHeaderNotFound) {
  EXPECT_EQ(apply_err("*** Begin Patch\n*** Update File: f\n@@ def nope():\n-a\n+b\n*** End Patch",
                      {{"f", "a\n"}}),
            "f: hunk 1 does not apply: could not find the context line:\ndef nope():");
}

TEST(ApplyPatchApplyErrors, FileExistence) {
  EXPECT_EQ(apply_err("*** Begin Patch\n*** Update File: nope.txt\n-a\n+b\n*** End Patch", {}),
            "nope.txt: cannot update: the file does not exist");
  EXPECT_EQ(apply_err("*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch", {}),
            "nope.txt: cannot delete: the file does not exist");
  EXPECT_EQ(apply_err("*** Begin Patch\n*** Add File: here.txt\n+x\n*** End Patch",
                      {{"here.txt", "old\n"}}),
            "here.txt: cannot add: the file already exists");
  EXPECT_EQ(apply_err("*** Begin Patch\n*** Delete File: a\n*** Update File: a\n-x\n*** End Patch",
                      {{"a", "x\n"}}),
            "a: cannot update: the file does not exist");
}

TEST(ApplyPatchApplyErrors, AllOrNothingAcrossFiles) {
  auto r = compute_patch_changes(
      parse_ok("*** Begin Patch\n"
               "*** Update File: good.txt\n-a\n+A\n"
               "*** Add File: new.txt\n+n\n"
               "*** Update File: bad.txt\n@@\n-not there\n+x\n"
               "*** End Patch"),
      {{"good.txt", "a\n"}, {"bad.txt", "b\n"}});
  ASSERT_TRUE(std::holds_alternative<PatchError>(r));
  EXPECT_EQ(std::get<PatchError>(r).message,
            "bad.txt: hunk 1 does not apply: could not find the lines:\nnot there");
}

TEST(ApplyPatchApplyErrors, MultiFileSuccessReturnsAllChanges) {
  auto changes = apply_ok(
      "*** Begin Patch\n*** Update File: a\n-1\n+one\n*** Delete File: b\n*** Add File: c\n+3\n"
      "*** End Patch",
      {{"a", "1\n"}, {"b", "2\n"}});
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].new_text, "one\n");
  EXPECT_FALSE(changes[1].new_text);
  EXPECT_EQ(changes[2].new_text, "3\n");
}
