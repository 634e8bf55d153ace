#include "support/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
