#pragma once
// `<config root>/executors/<id>.yaml` (DESIGN §10) as loaded: a place where files are read and
// written and processes run. `local` and `openvaala` are built in and never come from a file.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace runtime::config {

struct ExecutorConfig {
  enum class Type { Local, Ssh, Virtual, Builtin, Container, Devcontainer };
  std::string id;
  Type type = Type::Local;
  // ssh
  std::string host;                          // a host name or an alias of ~/.ssh/config
  std::optional<std::string> user;           // ssh: else ssh's own default; container: else the image's
  std::optional<int> port;
  std::optional<std::filesystem::path> identity_file;  // `~` already expanded (local path)
  std::vector<std::string> ssh_options;      // each passed as `-o`
  std::string workdir;                       // as written (`~/x` is expanded there); empty: the remote home
  std::vector<std::pair<std::string, std::string>> env;  // added to commands run there
  bool helper = true;                        // ssh, container: run operations through `openvaala executor-helper` there
  // container (and devcontainer, read from its devcontainer.json)
  std::string engine;                        // "podman" | "docker"; empty: podman when found, else docker
  std::string container;                     // exec into this running container; or
  std::string image;                         // start one from this image, removed when the server ends
  std::vector<std::string> mount_args;       // image mode: the engine's own flags ("-v", "a:b", "--mount", ...)
  std::filesystem::path folder;              // devcontainer: the folder holding .devcontainer/devcontainer.json
  // virtual
  std::filesystem::path root;                // a local folder seen as `/`
  bool read_only = false;

  std::filesystem::path file;                // empty for the built-in ones
};

inline constexpr const char* kLocalExecutor = "local";
inline constexpr const char* kOpenvaalaExecutor = "openvaala";

// "ssh" | "virtual" | "local" | "builtin" | "container" | "devcontainer"
const char* executor_type_name(ExecutorConfig::Type t);

}  // namespace runtime::config
