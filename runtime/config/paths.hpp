#pragma once
// Where OpenVaala keeps things (DESIGN §4): config root, cache and data dirs, from the
// environment with the XDG fallbacks.
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>

namespace runtime::config {

std::filesystem::path config_root();  // $OPENVAALA_CONFIG_DIR | $XDG_CONFIG_HOME/openvaala | ~/.config/openvaala
// The same rule over another process's environment (`env` answers "" for an unset variable).
std::filesystem::path config_root_from(const std::function<std::string(const char*)>& env);
std::filesystem::path cache_dir();    // $OPENVAALA_CACHE_DIR | $XDG_CACHE_HOME/openvaala | ~/.cache/openvaala
std::filesystem::path data_dir();     // $OPENVAALA_DATA_DIR | $XDG_DATA_HOME/openvaala | ~/.local/share/openvaala

// Creates `dir` and every missing parent with mode 0700, whatever the umask: the config root
// holds hooks that run code and the keys, the data dir the sessions, the cache the hook scripts
// we execute, so no other user may write (or read) any folder we create. Folders that exist
// already keep their mode. `ec` is set when a component cannot be created or is not a folder.
void create_private_directories(const std::filesystem::path& dir, std::error_code& ec);

}  // namespace runtime::config
