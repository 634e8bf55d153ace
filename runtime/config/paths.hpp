#pragma once
// Where OpenVaala keeps things (DESIGN §4): config root, cache and data dirs, from the
// environment with the XDG fallbacks.
#include <filesystem>

namespace runtime::config {

std::filesystem::path config_root();  // $OPENVAALA_CONFIG_DIR | $XDG_CONFIG_HOME/openvaala | ~/.config/openvaala
std::filesystem::path cache_dir();    // $OPENVAALA_CACHE_DIR | ~/.cache/openvaala
std::filesystem::path data_dir();     // $OPENVAALA_DATA_DIR | $XDG_DATA_HOME/openvaala | ~/.local/share/openvaala

}  // namespace runtime::config
