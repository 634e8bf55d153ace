#pragma once
// The executor helper is this very program (`openvaala executor-helper`), copied once to every
// machine or container that runs it, to `~/.cache/openvaala/bin/<hash>/openvaala` there. The
// hash is the binary's GNU build-id, so a new build goes to a new folder and an old one is never
// overwritten while it runs. What is copied is this binary without its debug information (a
// RelWithDebInfo build is 400 MB, stripped about 20 MB): made once with `objcopy --strip-debug`
// into the local cache, else the binary itself.
#include <filesystem>
#include <optional>
#include <string>

namespace runtime::executors {

struct HelperBinary {
  std::filesystem::path program;  // this program's file (or $OPENVAALA_HELPER_BINARY)
  std::string hash;               // the build-id, hex
  std::string arch;               // uname -m here ("x86_64")
  bool as_is = false;             // copied as it is (named by $OPENVAALA_HELPER_BINARY)
};

// Cheap (no file is copied or made); cached. nullopt and `why` when there is nothing to copy
// (this program's file cannot be found). $OPENVAALA_HELPER_BINARY names another file to copy
// instead (the unit tests, whose own binary is not openvaala).
std::optional<HelperBinary> helper_binary(std::string& why);

// The file to copy there: the stripped copy, made the first time it is needed (blocking).
std::filesystem::path helper_file_to_copy(const HelperBinary& binary);

// Where the helper goes there, relative to $HOME.
std::string remote_helper_path(const std::string& hash);

}  // namespace runtime::executors
