#include "support/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace support {

namespace fs = std::filesystem;

std::string errno_text(int err) { return std::strerror(err); }

std::optional<std::string> read_file(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st{};
  std::string out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[16384];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

namespace {

// What a file that is not a regular one is, for the refusal.
std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a pipe (FIFO)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor it holds.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd& operator=(Fd&&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Opened without blocking (a FIFO with no writer, a tty), then refused unless regular; then
// blocking again, as ordinary reads are.
Fd open_regular_file(const fs::path& p) {
  Fd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) throw FileReadError(errno_text(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw FileReadError(errno_text(errno));
  if (!S_ISREG(st.st_mode)) throw FileReadError("it is " + kind_of(st.st_mode) + ", not a regular file");
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) throw FileReadError(errno_text(errno));
  return fd;
}

// Takes a file's bytes chunk by chunk and keeps those of the window; says when it has them all.
class WindowCollector {
 public:
  WindowCollector(const LineWindow& window, WindowRead& out)
      : w_(window), out_(out), in_window_(window.first_line <= 1) {}

  // True when the window is complete (or cut at max_bytes): read no more.
  bool take(const char* p, const char* end) {
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      const char* line_end = nl ? nl + 1 : end;
      if (!in_window_) {
        if (nl && ++line_ >= w_.first_line) in_window_ = true;
      } else if (keep(p, line_end) || (nl && ++lines_kept_ >= w_.max_lines)) {
        return true;
      }
      p = line_end;
    }
    return false;
  }

 private:
  // Appends what fits under max_bytes; true when it did not all fit.
  bool keep(const char* p, const char* end) {
    const auto want = static_cast<std::size_t>(end - p);
    const std::size_t room = w_.max_bytes - out_.text.size();
    out_.text.append(p, std::min(want, room));
    out_.cut = want > room;
    return out_.cut;
  }

  const LineWindow& w_;
  WindowRead& out_;
  bool in_window_;
  std::int64_t line_ = 1;  // the line the next byte belongs to, before the window
  std::int64_t lines_kept_ = 0;
};

}  // namespace

WindowRead read_file_window(const fs::path& path, const LineWindow& window, const std::atomic<bool>* stop) {
  Fd fd = open_regular_file(path);
  WindowRead out;
  if (window.max_lines < 1) return out;
  WindowCollector collector(window, out);
  std::string chunk(kReadChunkBytes, '\0');
  while (true) {
    if (stop && stop->load(std::memory_order_relaxed)) {
      out.stopped = true;
      return out;
    }
    ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw FileReadError(errno_text(errno));
    if (n == 0) return out;
    out.bytes_read += static_cast<std::uint64_t>(n);
    if (collector.take(chunk.data(), chunk.data() + n)) return out;
  }
}

WindowRead window_of_text(std::string_view text, const LineWindow& window) {
  WindowRead out;
  if (window.max_lines < 1) return out;
  WindowCollector collector(window, out);
  collector.take(text.data(), text.data() + text.size());
  out.bytes_read = text.size();
  return out;
}

namespace {
void replace_file(const fs::path& requested, const std::string& content, mode_t mode, bool sync) {
  // A symlinked file (dotfile managers) is replaced at its target, keeping the link.
  fs::path path = requested;
  std::error_code ec;
  if (fs::is_symlink(requested, ec)) {
    auto target = fs::weakly_canonical(requested, ec);
    if (!ec) path = target;
  }
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  // mkstemp opens with O_CREAT|O_EXCL and mode 0600: the content is never readable by others,
  // not even for a moment, and a planted file or symlink at the temp name is never followed.
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error("cannot create a file in " + dir.string() + ": " + errno_text(errno));
  auto fail = [&](const std::string& what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " + what + ": " + errno_text(err));
  };
  if (::fchmod(fd, mode) != 0) fail("chmod");
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (sync && ::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": close: " + errno_text(err));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    throw std::runtime_error("cannot replace " + path.string() + ": " + errno_text(err));
  }
}

}  // namespace

void write_file_atomically(const fs::path& path, const std::string& content, mode_t mode) {
  replace_file(path, content, mode, true);
}

void write_file_atomically_unsynced(const fs::path& path, const std::string& content, mode_t mode) {
  replace_file(path, content, mode, false);
}

}  // namespace support
