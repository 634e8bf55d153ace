#pragma once
// The path a tool opens for a file, as containment judged it (DESIGN §11: paths handed to the
// editor's fs/* are the resolved ones).
#include <boost/asio/awaitable.hpp>

#include <filesystem>
#include <optional>
#include <string>

#include "runtime/tools/tool.hpp"

namespace runtime::tools {

// Where a call opens `path`. On local: `..` and symlinks resolved in this process; nullopt when
// the editor does the I/O (`through_editor`) and the path names a file of whichever process
// opens it (/proc, /dev/fd, /dev/std*). On another executor: the path as given, absolute there.
boost::asio::awaitable<std::optional<std::filesystem::path>> path_to_open(ToolContext& ctx, const std::string& path,
                                                                     bool through_editor);
// Result text for a path path_to_open refused.
ToolResult process_file_result(const std::string& path);

}  // namespace runtime::tools
