#pragma once
// The write of a file whose path containment judged (DESIGN §11): it lands where the path was
// judged to lie, or nowhere.
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace support {

// As write_file_atomically (file_io.hpp), for a path resolved already (absolute, no symlink
// along its folders): the folders are opened (created where missing) one by one without
// following symlinks, and the file is created and renamed in the folder so opened. A folder
// swapped for a symlink since the path was judged fails the write instead of leading it
// elsewhere. Throws std::runtime_error naming the file and why.
void write_resolved_file_atomically(const std::filesystem::path& resolved, const std::string& content, mode_t mode);

}  // namespace support
