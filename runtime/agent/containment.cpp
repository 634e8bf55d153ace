#include "runtime/agent/containment.hpp"

#include <algorithm>

namespace runtime::containment {

namespace fs = std::filesystem;

fs::path resolve(const fs::path& absolute) {
  std::error_code ec;
  auto resolved = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : resolved;
}

bool within(const fs::path& path, const fs::path& root) {
  if (root.empty()) return false;
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing separator ("/a/b/") ends in an empty element
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

namespace {

bool within_any(const fs::path& resolved, const std::vector<fs::path>& roots) {
  return std::any_of(roots.begin(), roots.end(), [&](const fs::path& r) { return within(resolved, resolve(r)); });
}

// The credentials file by any name: itself, a symlink to it, `..` detours, or a hard link.
bool is_credentials(const fs::path& resolved, const fs::path& credentials) {
  if (credentials.empty()) return false;
  if (resolved == resolve(credentials)) return true;
  std::error_code ec;
  return fs::equivalent(resolved, credentials, ec) && !ec;
}

Place place_of(const Scope& scope, Access access, const fs::path& path) {
  auto resolved = resolve(path);
  if (is_credentials(resolved, scope.credentials_file)) return Place::Credentials;
  if (access == Access::Write && within(resolved, resolve(scope.config_root))) return Place::ConfigRoot;
  if (within_any(resolved, scope.roots)) return Place::Inside;
  if (access == Access::Read && within_any(resolved, scope.read_roots)) return Place::Inside;
  return Place::Outside;
}

}  // namespace

Place classify(const Scope& scope, Access access, const std::vector<fs::path>& paths) {
  Place worst = Place::Inside;
  for (const auto& p : paths) worst = std::max(worst, place_of(scope, access, p));
  return worst;
}

}  // namespace runtime::containment
