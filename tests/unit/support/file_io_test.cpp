// The one atomic writer and the whole-file reader.
#include "support/file_io.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>

namespace fs = std::filesystem;

namespace {

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("ov-file-io-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode & 07777;
}

}  // namespace

TEST(FileIo, WriteFileAtomicallyUsesTheModeAndWritesThroughSymlinks) {
  TempDir dir;
  auto target = dir.path() / "real.yaml";
  auto link = dir.path() / "config.yaml";
  write(target, "old\n");
  fs::create_symlink(target, link);
  support::write_file_atomically(link, "new\n", 0640);
  EXPECT_TRUE(fs::is_symlink(link)) << "a dotfile user's symlink must stay a symlink";
  EXPECT_EQ(support::read_file(target), "new\n") << "the link's target gets the new content";
  EXPECT_EQ(mode_of(target), 0640u);
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find(".config.yaml."), std::string::npos) << "no temp file left: " << e.path();
}

TEST(FileIo, ReadFileReadsWholeFilesAndReportsMissingOnes) {
  TempDir dir;
  std::string big(200'000, 'x');
  write(dir.path() / "big", big);
  EXPECT_EQ(support::read_file(dir.path() / "big"), big);
  EXPECT_EQ(support::read_file(dir.path() / "missing"), std::nullopt);
  EXPECT_EQ(support::read_file(dir.path()), std::nullopt) << "a directory is not a file";
}

TEST(FileIo, AFailedWriteSaysWhichFileAndLeavesTheOldOne) {
  TempDir dir;
  auto file = dir.path() / "missing-dir" / "x";
  try {
    support::write_file_atomically(file, "x", 0600);
    FAIL() << "writing into a missing folder must fail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing-dir"), std::string::npos) << e.what();
  }
}
