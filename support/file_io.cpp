#include "support/file_io.hpp"
#include "support/resolved_file_write.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <system_error>
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

// A temp file in the folder `dir`, created O_EXCL with mode 0600 (never readable by others, not
// even for a moment; a planted file or symlink at its name is never followed); its name in `tmp`.
int create_temp(int dir, const std::string& name, std::string& tmp) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp = "." + name + "." + std::to_string(rng() % 1000000000);
    int fd = ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

void write_all(int fd, const std::string& content) {
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "write");
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// Replaces `name` in the open folder `dir` (shown as `shown` in errors): a temp file there,
// chmod, write, fsync, rename, all relative to `dir`, so the file lands in that folder whatever
// its path names by then.
void replace_in(int dir, const std::string& name, const fs::path& shown, const std::string& content, mode_t mode, bool sync) {
  std::string tmp;
  int fd = create_temp(dir, name, tmp);
  if (fd < 0) throw std::runtime_error("cannot create a file in " + shown.parent_path().string() + ": " + errno_text(errno));
  try {
    if (::fchmod(fd, mode) != 0) throw std::system_error(errno, std::generic_category(), "chmod");
    write_all(fd, content);
    if (sync && ::fsync(fd) != 0) throw std::system_error(errno, std::generic_category(), "fsync");
    int closed = ::close(fd);
    fd = -1;
    if (closed != 0) throw std::system_error(errno, std::generic_category(), "close");
  } catch (const std::system_error& e) {
    if (fd >= 0) ::close(fd);
    ::unlinkat(dir, tmp.c_str(), 0);
    throw std::runtime_error("cannot write " + shown.string() + ": " + e.what());
  }
  if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) {
    int err = errno;
    ::unlinkat(dir, tmp.c_str(), 0);
    throw std::runtime_error("cannot replace " + shown.string() + ": " + errno_text(err));
  }
}

// One part of a folder path, in the open folder `at`, not followed if a symlink; created (0777
// less the umask) when missing.
int open_part(int at, const fs::path& part) {
  if (part == "..") return errno = EINVAL, -1;
  const int flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(at, part.c_str(), flags);
  if (fd < 0 && errno == ENOENT && (::mkdirat(at, part.c_str(), 0777) == 0 || errno == EEXIST))
    fd = ::openat(at, part.c_str(), flags);
  struct stat st {};
  if (fd < 0 && errno == ENOTDIR && ::fstatat(at, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
    errno = ELOOP;  // O_PATH|O_NOFOLLOW gives a symlink's own inode, not a folder: ENOTDIR
  return fd;
}

// The folder `dir` (absolute, no `..`), opened (created where missing) one part at a time
// without following a symlink anywhere along it; -1 with errno (ELOOP for a symlink) when it cannot.
int open_real_folder(const fs::path& dir) {
  int fd = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  for (const auto& part : dir.relative_path()) {
    if (fd < 0) return -1;
    if (part.empty() || part == ".") continue;
    int next = open_part(fd, part);
    int err = errno;
    ::close(fd);
    if (next < 0) errno = err;
    fd = next;
  }
  return fd;
}

struct Folder {
  explicit Folder(int fd) : fd(fd) {}
  ~Folder() {
    if (fd >= 0) ::close(fd);
  }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  int fd;
};

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
  Folder folder(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (folder.fd < 0) throw std::runtime_error("cannot create a file in " + dir.string() + ": " + errno_text(errno));
  replace_in(folder.fd, path.filename().string(), path, content, mode, sync);
}

}  // namespace

void write_file_atomically(const fs::path& path, const std::string& content, mode_t mode) {
  replace_file(path, content, mode, true);
}

void write_file_atomically_unsynced(const fs::path& path, const std::string& content, mode_t mode) {
  replace_file(path, content, mode, false);
}

void write_resolved_file_atomically(const fs::path& resolved, const std::string& content, mode_t mode) {
  if (!resolved.is_absolute() || !resolved.has_filename())
    throw std::runtime_error("cannot write " + resolved.string() + ": not an absolute file path");
  Folder folder(open_real_folder(resolved.parent_path()));
  if (folder.fd < 0)
    throw std::runtime_error("cannot write " + resolved.string() + ": its folder " + resolved.parent_path().string() +
                             (errno == ELOOP ? " is, or lies under, a symlink now (it changed since it was checked)"
                                             : ": " + errno_text(errno)));
  replace_in(folder.fd, resolved.filename().string(), resolved, content, mode, true);
}

}  // namespace support
