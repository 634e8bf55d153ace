#pragma once
// Where an executor's paths really lie, for containment (DESIGN §11: a path is inside a root only
// after resolving `..` and symlinks, on each executor). An executor offers it beside Executor; one
// that does not has its paths judged as outside.
#include <boost/asio/awaitable.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/cancellation.hpp"

namespace runtime {

// Paths as that machine resolves them.
struct RealPaths {
  std::vector<std::string> paths;  // each asked path, `..` and the symlinks of its longest existing prefix resolved
  std::string config_root;         // openvaala's config folder of the user there (~/.config/openvaala), resolved
};

class ExecutorPaths {
 public:
  virtual ~ExecutorPaths() = default;
  // The local file behind `path` when the executor's files are local ones (virtual, openvaala):
  // judged as local files. nullopt elsewhere. Throws ExecutorError for a path outside its root.
  virtual std::optional<std::filesystem::path> local_file(const std::string& path) const = 0;
  // Resolves `paths` (absolute, or relative to the working directory) there, in one round trip,
  // with the config root there (ssh). Connect first. Throws ExecutorError when it cannot tell.
  virtual boost::asio::awaitable<RealPaths> real_paths(const std::vector<std::string>& paths,
                                                       support::CancelSource* cancel) = 0;
};

}  // namespace runtime
