#include "runtime/config/paths.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

namespace runtime::config {

namespace fs = std::filesystem;

static const char* env_nonempty(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

static fs::path home() {
  if (const char* h = env_nonempty("HOME")) return h;
  return "/";
}

fs::path config_root_from(const std::function<std::string(const char*)>& env) {
  if (auto v = env("OPENVAALA_CONFIG_DIR"); !v.empty()) return v;
  if (auto v = env("XDG_CONFIG_HOME"); !v.empty()) return fs::path(v) / "openvaala";
  const auto h = env("HOME");
  return fs::path(h.empty() ? "/" : h) / ".config" / "openvaala";
}

fs::path config_root() {
  return config_root_from([](const char* name) -> std::string {
    const char* v = env_nonempty(name);
    return v ? v : "";
  });
}

fs::path cache_dir() {
  if (const char* v = env_nonempty("OPENVAALA_CACHE_DIR")) return v;
  if (const char* v = env_nonempty("XDG_CACHE_HOME")) return fs::path(v) / "openvaala";
  return home() / ".cache" / "openvaala";
}

fs::path data_dir() {
  if (const char* v = env_nonempty("OPENVAALA_DATA_DIR")) return v;
  if (const char* v = env_nonempty("XDG_DATA_HOME")) return fs::path(v) / "openvaala";
  return home() / ".local" / "share" / "openvaala";
}

void create_private_directories(const fs::path& dir, std::error_code& ec) {
  ec.clear();
  fs::path so_far;
  for (const auto& part : dir.lexically_normal()) {
    so_far /= part;
    if (part.empty() || so_far == so_far.root_path()) continue;
    if (::mkdir(so_far.c_str(), 0700) == 0) {
      ::chmod(so_far.c_str(), 0700);  // a umask such as 0777 would leave even us out
      continue;
    }
    if (errno != EEXIST) {
      ec.assign(errno, std::generic_category());
      return;
    }
    struct stat st {};
    if (::stat(so_far.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      ec = std::make_error_code(std::errc::not_a_directory);
      return;
    }
  }
}

}  // namespace runtime::config
