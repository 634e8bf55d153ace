// Paths as the engine's loaders see them: containment after symlinks, regular-file size, `~/`.
#include "runtime/engine/paths.hpp"

#include <sys/stat.h>

namespace runtime::engine {

bool is_file(const fs::path& p) {
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
bool is_dir(const fs::path& p) {
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::optional<std::uintmax_t> regular_file_size(const fs::path& p) {
  struct stat st{};
  if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<std::uintmax_t>(st.st_size);
}

bool path_within(const fs::path& root, const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(root, ec);
  if (ec) r = root.lexically_normal();
  fs::path q = fs::weakly_canonical(p, ec);
  if (ec) q = p.lexically_normal();
  auto rel = q.lexically_relative(r);
  if (rel.empty()) return false;
  auto first = *rel.begin();
  return first != "..";
}

fs::path expand_home(const std::string& p, const fs::path& home) {
  if (p == "~") return home;
  if (p.rfind("~/", 0) == 0) return home / p.substr(2);
  return p;
}

}  // namespace runtime::engine
