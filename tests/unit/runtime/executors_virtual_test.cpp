// The `virtual` executor (DESIGN §10): a local folder seen as `/` (or under a prefix, as the
// built-in `openvaala` shows its skills under /skills), files only, never a path outside the
// folder (`..` or a symlink), read-only when configured so.
#include "executor_test_util.hpp"
#include "runtime/protocol/executor_paths.hpp"

using namespace executor_test;
using runtime::executors::make_virtual_executor;

namespace {

class VirtualExecutor : public ExecutorTest {
 protected:
  VirtualExecutor() {
    root = dir / "root";
    write_text(root / "note.md", "virtual note\n");
    write_text(dir / "outside.txt", "outside\n");
  }
  std::shared_ptr<runtime::Executor> ex(bool read_only = false, std::string prefix = "") {
    return make_virtual_executor(deps(), "docs", "virtual", root, std::move(prefix), read_only);
  }
  fs::path root;
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_F(VirtualExecutor, SaysWhatItIs) {
  auto e = ex();
  EXPECT_EQ(e->info().id, "docs");
  EXPECT_EQ(e->info().type, "virtual");
  EXPECT_EQ(e->info().where, root.string());
  EXPECT_FALSE(e->info().can_run) << "a virtual executor has files only";
  EXPECT_EQ(run(e->working_directory(nullptr)), "/");
  EXPECT_EQ(run(ex(true, "/skills")->working_directory(nullptr)), "/skills");
}

TEST_F(VirtualExecutor, SlashIsTheFolder) {
  EXPECT_EQ(run(ex()->read_file("/note.md", nullptr)), "virtual note\n");
  EXPECT_EQ(run(ex()->read_file("note.md", nullptr)), "virtual note\n") << "relative paths start at /";
  EXPECT_EQ(dynamic_cast<runtime::ExecutorPaths&>(*ex()).local_file("/note.md").value_or(""), root / "note.md");
  auto st = run(ex()->stat("/note.md", nullptr));
  EXPECT_TRUE(st.exists);
  EXPECT_EQ(st.size, 13u);
}

TEST_F(VirtualExecutor, APrefixIsTheOnlyFolderThere) {
  auto e = ex(true, "/skills");
  EXPECT_EQ(run(e->read_file("/skills/note.md", nullptr)), "virtual note\n");
  EXPECT_EQ(run(e->read_file("note.md", nullptr)), "virtual note\n") << "relative paths start at the prefix";
  EXPECT_TRUE(contains(error_of(e->read_file("/etc/passwd", nullptr)), "/etc/passwd does not exist (only /skills does)"));
  EXPECT_TRUE(contains(error_of(e->read_file("/skillsX/note.md", nullptr)), "does not exist (only /skills does)"))
      << "a sibling whose name starts like the prefix is not under it";
}

TEST_F(VirtualExecutor, NothingOutsideTheFolder) {
  const std::string why = "lies outside the executor's root";
  EXPECT_NE(error_of(ex()->read_file("../outside.txt", nullptr)), "") << "`..` at / stays at / (there is no outside.txt there)";
  fs::create_symlink(dir / "outside.txt", root / "link.txt");
  EXPECT_TRUE(contains(error_of(ex()->read_file("/link.txt", nullptr)), why)) << "a symlink must not lead out";
  fs::create_directory_symlink(dir, root / "up");
  EXPECT_TRUE(contains(error_of(ex()->write_file("/up/written.txt", "x", nullptr)), why));
  EXPECT_FALSE(fs::exists(dir / "written.txt")) << "a write through a symlinked folder must not land outside";
}

TEST_F(VirtualExecutor, WritesMakeTheFoldersAndRemoveRemoves) {
  run(ex()->write_file("/a/b/c.txt", "deep", nullptr));
  EXPECT_EQ(read_text(root / "a" / "b" / "c.txt"), "deep");
  run(ex()->remove_file("/a/b/c.txt", nullptr));
  EXPECT_FALSE(fs::exists(root / "a" / "b" / "c.txt"));
  write_text(root / "a" / "b" / "d.txt", "x");
  EXPECT_TRUE(contains(error_of(ex()->remove_file("/a/b", nullptr)), "executor 'docs' (virtual): cannot remove /a/b"))
      << "a folder that is not empty stays, and the error names the executor";
}

TEST_F(VirtualExecutor, ReadOnlyRefusesWritesAndRemoves) {
  auto e = ex(true);
  EXPECT_TRUE(contains(error_of(e->write_file("/note.md", "changed", nullptr)), "it is read-only; cannot write /note.md"));
  EXPECT_TRUE(contains(error_of(e->remove_file("/note.md", nullptr)), "it is read-only; cannot write /note.md"));
  EXPECT_EQ(read_text(root / "note.md"), "virtual note\n") << "a read-only executor's files never change";
  EXPECT_EQ(run(e->read_file("/note.md", nullptr)), "virtual note\n") << "reads still work";
}

TEST_F(VirtualExecutor, NoCommands) {
  runtime::RunRequest r;
  r.command = "touch " + (dir / "ran").string();
  EXPECT_TRUE(contains(error_of(ex()->run(std::move(r), nullptr)), "it has files only and cannot run commands"));
  EXPECT_FALSE(fs::exists(dir / "ran"));
  EXPECT_THROW((void)ex()->launch_argv("true", {}), runtime::ExecutorError);
}

TEST_F(VirtualExecutor, ErrorsNameTheExecutor) {
  EXPECT_TRUE(contains(error_of(ex()->read_file("/missing.md", nullptr)), "executor 'docs' (virtual): cannot read /missing.md"));
}
