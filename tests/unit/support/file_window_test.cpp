// read_file_window: regular files only, opened without blocking, and no more of a file read than
// the window needs (the read_file tool's path when the editor does not read for it).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <random>
#include <thread>

#include "support/file_io.hpp"

namespace fs = std::filesystem;
using support::FileReadError;
using support::LineWindow;

namespace {

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("ov-window-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
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

// The refusal's message, or "" when it read; fails the test (and frees the reader) if the read
// blocks, as a FIFO opened without O_NONBLOCK does until a writer comes.
std::string refusal_of(const fs::path& p) {
  std::promise<std::string> answer;
  auto got = answer.get_future();
  std::atomic<bool> stop{false};  // ends a read of /dev/zero that was not refused
  std::thread reader([&answer, &stop, p] {
    try {
      support::read_file_window(p, {1, LineWindow{}.max_lines, 1 << 20}, &stop);  // /dev/zero read: 1 MiB at most
      answer.set_value("");
    } catch (const FileReadError& e) {
      answer.set_value(e.what());
    }
  });
  const bool answered = got.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  if (!answered) {
    ADD_FAILURE() << p << ": the read blocked for 5 s instead of refusing";
    stop = true;
    int w = ::open(p.c_str(), O_WRONLY | O_NONBLOCK);  // a writer that leaves at once ends the read
    if (w >= 0) ::close(w);
  }
  reader.join();
  return got.get();
}

std::string numbered_lines(int n) {
  std::string text;
  for (int i = 1; i <= n; ++i) text += "line " + std::to_string(i) + "\n";
  return text;
}

}  // namespace

TEST(FileWindow, AFifoADeviceAndADirectoryAreRefusedAtOnceNamingWhatTheyAre) {
  TempDir dir;
  auto fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(refusal_of(fifo).find("FIFO"), std::string::npos) << "a FIFO with no writer must be refused, not waited on";
  EXPECT_NE(refusal_of("/dev/zero").find("character device"), std::string::npos) << "/dev/zero never ends: refused";
  EXPECT_NE(refusal_of(dir.path()).find("directory"), std::string::npos);
  EXPECT_NE(refusal_of(dir.path() / "missing").find("No such file"), std::string::npos);
}

TEST(FileWindow, ASymlinkToARegularFileIsRead) {
  TempDir dir;
  std::ofstream(dir.path() / "real.txt") << "hello\n";
  fs::create_symlink(dir.path() / "real.txt", dir.path() / "link.txt");
  EXPECT_EQ(support::read_file_window(dir.path() / "link.txt", {}).text, "hello\n");
}

// 1 GiB of zeros (sparse: no disk used) is one endless line: the answer stops at max_bytes and the
// read one chunk after it, whatever the file's size.
TEST(FileWindow, AHugeFileCostsTheWindowNotTheFile) {
  TempDir dir;
  auto big = dir.path() / "big.bin";
  {
    int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, 1LL << 30), 0);
    ::close(fd);
  }
  const std::size_t cap = 256 * 1024;
  auto read = support::read_file_window(big, {1, 2000, cap});
  EXPECT_EQ(read.text.size(), cap);
  EXPECT_TRUE(read.cut) << "the caller must learn that the answer was cut";
  EXPECT_LE(read.bytes_read, cap + support::kReadChunkBytes) << "read no further than the window needs";
  EXPECT_LE(read.text.capacity(), 2 * cap) << "memory is bounded by the cap, not the file's size";
}

TEST(FileWindow, AWindowOfLinesStopsReadingAtItsLastLine) {
  TempDir dir;
  const std::string text = numbered_lines(200'000);  // about 2.5 MB
  std::ofstream(dir.path() / "many.txt", std::ios::binary) << text;
  auto read = support::read_file_window(dir.path() / "many.txt", {10, 3, 1 << 20});
  EXPECT_EQ(read.text, "line 10\nline 11\nline 12\n");
  EXPECT_FALSE(read.cut);
  EXPECT_LE(read.bytes_read, support::kReadChunkBytes) << "the window ends in the first chunk: nothing more is read";
  EXPECT_EQ(support::window_of_text(text, {10, 3, 1 << 20}).text, read.text) << "one meaning of a window, in memory or not";
}

TEST(FileWindow, WindowsAtTheEdges) {
  const std::string text = "a\nbb\nccc";  // the last line has no newline
  EXPECT_EQ(support::window_of_text(text, {}).text, text);
  EXPECT_EQ(support::window_of_text(text, {3, 5}).text, "ccc");
  EXPECT_EQ(support::window_of_text(text, {4, 5}).text, "") << "past the end: nothing";
  EXPECT_EQ(support::window_of_text(text, {2, 1}).text, "bb\n");
  auto exact = support::window_of_text(text, {1, 10, text.size()});
  EXPECT_FALSE(exact.cut) << "a file exactly max_bytes long is whole, not cut";
  auto over = support::window_of_text(text, {1, 10, text.size() - 1});
  EXPECT_TRUE(over.cut);
  EXPECT_EQ(over.text, "a\nbb\ncc");
  auto lines_then_cap = support::window_of_text(text, {1, 2, 5});
  EXPECT_EQ(lines_then_cap.text, "a\nbb\n");
  EXPECT_FALSE(lines_then_cap.cut) << "the window's lines all fit: not cut, though the file goes on";
}

TEST(FileWindow, AStopSetBeforehandReadsNothing) {
  TempDir dir;
  std::ofstream(dir.path() / "a.txt") << numbered_lines(10);
  std::atomic<bool> stop{true};
  auto read = support::read_file_window(dir.path() / "a.txt", {}, &stop);
  EXPECT_TRUE(read.stopped);
  EXPECT_EQ(read.bytes_read, 0u);
}
