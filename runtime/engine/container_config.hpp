#pragma once
// The container and devcontainer executors' files (DESIGN §10): executors/<id>.yaml with
// `type: container` (a running container, or an image started for the server), and
// `type: devcontainer` (a folder's .devcontainer/devcontainer.json, image mode).
#include <filesystem>

#include "runtime/config/diagnostic.hpp"
#include "runtime/config/executor_config.hpp"
#include "runtime/config/yaml_reading.hpp"

namespace runtime::engine::detail {

void read_container(config::YamlReader& r, const YAML::Node& root, config::ExecutorConfig& x,
                    const std::filesystem::path& home);
// Problems of devcontainer.json itself are reported against that file (path:line) in `diags`.
void read_devcontainer(config::YamlReader& r, const YAML::Node& root, config::ExecutorConfig& x,
                       const std::filesystem::path& home, config::Diagnostics& diags);

}  // namespace runtime::engine::detail
