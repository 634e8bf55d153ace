#pragma once
// `<config root>/credentials.yaml`: model provider API keys stored by `openvaala login`.
//
//   providers:
//     <provider id>:
//       api_key: <the key>
//
// The file is private to the user (mode 0600). The key a provider uses is, in order: the
// variable named by its `api_key_env` when set and non-empty, then this file. Keys are never
// logged and never appear in diagnostics.
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "runtime/config/diagnostic.hpp"

namespace runtime::config {

struct Credentials {
  std::filesystem::path file;                 // where it was read from (may not exist)
  std::map<std::string, std::string> api_keys;  // provider id -> key (non-empty)

  std::optional<std::string> api_key(const std::string& provider_id) const;
};

std::filesystem::path credentials_file(const std::filesystem::path& config_root);

// A missing file is not an error. Problems are appended to `diags` as `file:line: message`;
// a mode looser than 0600 is a warning. Entries that fail validation are left out.
Credentials load_credentials(const std::filesystem::path& config_root, Diagnostics& diags);

// Sets the key of one provider in credentials.yaml, keeping the other entries. The file is
// written to a fresh temp file (O_EXCL, mode 0600) and renamed over the old one, so the result
// is always 0600 whatever the old file's mode was. Throws std::runtime_error (the message never
// contains the key), e.g. when the existing file is not valid YAML.
void store_api_key(const std::filesystem::path& config_root, const std::string& provider_id, const std::string& api_key);

// Forgets every stored key (ACP `logout`): removes credentials.yaml. Returns whether there was
// one. Keys in the environment and config.yaml are not ours to forget and stay. Throws
// std::runtime_error when the file exists but cannot be removed.
bool forget_api_keys(const std::filesystem::path& config_root);


}  // namespace runtime::config
