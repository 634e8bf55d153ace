#include "runtime/agent/containment.hpp"

#include <algorithm>

#include "bridge/mcp/oauth_store.hpp"
#include "runtime/config/credentials.hpp"

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

bool names_process_file(const fs::path& absolute) {
  const auto p = absolute.lexically_normal();
  if (within(p, "/proc") || within(p, "/dev/fd")) return true;
  return p == "/dev/stdin" || p == "/dev/stdout" || p == "/dev/stderr";
}

void guard_config_root(Scope& scope, const fs::path& config_root) {
  scope.config_root = config_root;
  scope.secret_files = {config::credentials_file(config_root), bridge::mcp::oauth::token_file(config_root)};
}

namespace {

// A process's environment holds its keys: /proc/<pid>/environ, /proc/<pid>/task/<tid>/environ
// (/proc/self and /proc/thread-self resolve to those).
bool is_environ(const fs::path& resolved) { return within(resolved, "/proc") && resolved.filename() == "environ"; }

// Judged on paths resolved already: no lookup here.
Place place_of_resolved(const Scope& scope, Access access, const fs::path& resolved) {
  if (is_environ(resolved)) return Place::Credentials;
  for (const auto& s : scope.secret_files)
    if (!s.empty() && resolved == s) return Place::Credentials;
  if (access == Access::Write && within(resolved, scope.config_root)) return Place::ConfigRoot;
  auto in = [&](const fs::path& r) { return within(resolved, r); };
  if (std::any_of(scope.roots.begin(), scope.roots.end(), in)) return Place::Inside;
  if (access == Access::Write) return Place::Outside;
  if (std::any_of(scope.read_roots.begin(), scope.read_roots.end(), in)) return Place::Inside;
  auto same = [&](const fs::path& f) { return resolved == f; };
  return std::any_of(scope.read_files.begin(), scope.read_files.end(), same) ? Place::Inside : Place::Outside;
}

// Every path of the scope resolved, once per call.
Scope resolved_scope(const Scope& scope) {
  auto all = [](const std::vector<fs::path>& paths) {
    std::vector<fs::path> out;
    for (const auto& p : paths) out.push_back(resolve(p));
    return out;
  };
  return {all(scope.roots), all(scope.read_roots), all(scope.read_files),
          scope.config_root.empty() ? fs::path() : resolve(scope.config_root), all(scope.secret_files)};
}

// A secret file by any name: a hard link to it too (symlinks and `..` are resolved already).
bool hard_link_to_secret(const fs::path& resolved, const Scope& scope) {
  return std::any_of(scope.secret_files.begin(), scope.secret_files.end(), [&](const fs::path& s) {
    std::error_code ec;
    return !s.empty() && fs::equivalent(resolved, s, ec) && !ec;
  });
}

}  // namespace

Place classify(const Scope& scope, Access access, const std::vector<fs::path>& paths) {
  const Scope real = resolved_scope(scope);
  Place worst = Place::Inside;
  for (const auto& p : paths) {
    auto resolved = resolve(p);
    auto place = hard_link_to_secret(resolved, real) ? Place::Credentials : place_of_resolved(real, access, resolved);
    worst = std::max(worst, place);
  }
  return worst;
}

Place classify_resolved(const Scope& resolved, Access access, const std::vector<fs::path>& paths) {
  Place worst = Place::Inside;
  for (const auto& p : paths) worst = std::max(worst, place_of_resolved(resolved, access, p.lexically_normal()));
  return worst;
}

}  // namespace runtime::containment
