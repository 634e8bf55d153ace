#include "runtime/config/paths.hpp"

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

fs::path config_root() {
  if (const char* v = env_nonempty("OPENVAALA_CONFIG_DIR")) return v;
  if (const char* v = env_nonempty("XDG_CONFIG_HOME")) return fs::path(v) / "openvaala";
  return home() / ".config" / "openvaala";
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

}  // namespace runtime::config
