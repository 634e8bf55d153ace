#include "bridge/process/sandbox.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

// Rights of later ABIs, for building against older kernel headers (Debian 12 ships 6.1's).
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

namespace bridge::process::sandbox {

namespace {

constexpr std::uint64_t kReadAccess =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr std::uint64_t kWriteAccess =
    LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
    LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE |
    LANDLOCK_ACCESS_FS_IOCTL_DEV;
// What a rule on a file (not a folder) may carry; the rest is refused with EINVAL.
constexpr std::uint64_t kFileAccess = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                      LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                                      LANDLOCK_ACCESS_FS_IOCTL_DEV;

// Devices ordinary commands open by name; the rest of /dev (disks, as root) stays closed.
constexpr const char* kDevices[] = {"/dev/null", "/dev/zero",   "/dev/full", "/dev/random", "/dev/urandom",
                                    "/dev/tty",  "/dev/ptmx",   "/dev/pts",  "/dev/shm"};
constexpr const char* kTempFolders[] = {"/tmp", "/var/tmp"};

// `path` is `root` or lies under it (both resolved).
bool within(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

fs::path resolved(const fs::path& p) {
  std::error_code ec;
  auto r = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : r;
}

void split(const fs::path& path, unsigned rights, const std::vector<fs::path>& except, std::map<fs::path, unsigned>& out) {
  std::vector<fs::path> inner;
  for (const auto& e : except) {
    if (within(path, e)) return;
    if (within(e, path)) inner.push_back(e);
  }
  if (inner.empty()) {
    out[path] |= rights;
    return;
  }
  std::error_code ec;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code link_ec;
    if (it->is_symlink(link_ec) || link_ec) continue;
    split(it->path(), rights, inner, out);
  }
}


std::string add_rule(int ruleset, const Rule& rule, std::uint64_t handled) {
  const int fd = ::open(rule.path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return {};  // gone since the rules were made: it gets nothing
  struct stat st {};
  std::uint64_t access = ((rule.rights & kRead) ? kReadAccess : 0) | ((rule.rights & kWrite) ? kWriteAccess : 0) |
                         ((rule.rights & kList) ? LANDLOCK_ACCESS_FS_READ_DIR : 0);
  access &= handled;
  if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) access &= kFileAccess;
  landlock_path_beneath_attr beneath{};
  beneath.allowed_access = access;
  beneath.parent_fd = fd;
  const long rc = ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return "cannot add a Landlock rule for " + rule.path.string() + ": " + std::strerror(err);
  return {};
}

std::mutex program_mutex;
fs::path program_path;

}  // namespace

std::uint64_t handled_access(int abi) {
  std::uint64_t handled = kReadAccess | kWriteAccess;
  switch (abi) {
    case 1: handled &= ~LANDLOCK_ACCESS_FS_REFER; [[fallthrough]];
    case 2: handled &= ~LANDLOCK_ACCESS_FS_TRUNCATE; [[fallthrough]];
    case 3:
    case 4: handled &= ~LANDLOCK_ACCESS_FS_IOCTL_DEV; break;
    default: break;
  }
  return handled;
}

std::vector<Grant> grants_of(const Policy& policy) {
  std::vector<Grant> grants{{"/", kRead, {"/dev"}}};
  for (const char* d : kDevices) grants.push_back({d, kReadWrite, {}});
  for (const char* t : kTempFolders) grants.push_back({t, kReadWrite, {}});
  for (const auto& w : policy.write) grants.push_back({w, kReadWrite, {}});
  for (auto& g : grants) g.except.insert(g.except.end(), policy.deny.begin(), policy.deny.end());
  grants.push_back({"/", kList, {}});
  return grants;
}

std::vector<Rule> rules_of(const std::vector<Grant>& grants) {
  std::map<fs::path, unsigned> merged;
  for (const auto& g : grants) {
    std::error_code ec;
    auto path = fs::canonical(g.path, ec);
    if (ec) continue;
    std::vector<fs::path> except;
    for (const auto& e : g.except) except.push_back(resolved(e));
    split(path, g.rights, except, merged);
  }
  std::vector<Rule> rules;
  for (const auto& [path, rights] : merged) rules.push_back({path, rights});
  return rules;
}

int landlock_abi() {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? -errno : static_cast<int>(abi);
}

std::string unavailable_reason(int abi) {
  if (abi == -EOPNOTSUPP)
    return "Landlock is disabled on this kernel (add 'landlock' to the lsm= boot parameter to enable it)";
  if (abi == -ENOSYS) return "this kernel has no Landlock (it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK)";
  return std::string("Landlock cannot be used here: ") + std::strerror(-abi);
}

std::string restrict_self(const std::vector<Rule>& rules) {
  const int abi = landlock_abi();
  if (abi < 0) return unavailable_reason(abi);
  const std::uint64_t handled = handled_access(abi);
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = handled;
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (ruleset < 0) return std::string("cannot create a Landlock ruleset: ") + std::strerror(errno);
  std::string error;
  for (const auto& rule : rules) {
    error = add_rule(ruleset, rule, handled);
    if (!error.empty()) break;
  }
  if (error.empty() && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    error = std::string("cannot set no_new_privs: ") + std::strerror(errno);
  if (error.empty() && ::syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
    error = std::string("cannot enter the Landlock sandbox: ") + std::strerror(errno);
  ::close(ruleset);
  return error;
}

std::vector<std::string> helper_argv(const fs::path& program, const Policy& policy) {
  std::vector<std::string> argv{program.string(), "sandbox"};
  for (const auto& d : policy.deny) argv.insert(argv.end(), {"--deny", d.string()});
  for (const auto& w : policy.write) argv.insert(argv.end(), {"--write", w.string()});
  argv.push_back("--");
  return argv;
}

void set_helper_program(fs::path program) {
  std::lock_guard lock(program_mutex);
  program_path = std::move(program);
}

fs::path helper_program() {
  std::lock_guard lock(program_mutex);
  return program_path;
}

}  // namespace bridge::process::sandbox
