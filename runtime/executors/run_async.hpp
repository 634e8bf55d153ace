#pragma once
// The executors' blocking work on the pool: a cancel flag the worker polls, and output chunks
// handed back to the io executor while the caller still waits for them.
#include <boost/asio/post.hpp>

#include <atomic>
#include <memory>

#include "bridge/process/child_process.hpp"
#include "runtime/executors/executors.hpp"
#include "support/cancellation.hpp"
#include "support/run_blocking.hpp"

namespace runtime::executors::detail {

// run_process on the pool. `request.on_output` (if any) is called on deps.io, never after this returns.
boost::asio::awaitable<bridge::process::ProcessResult> run_on_pool(const Deps& deps, bridge::process::ProcessSpec spec,
                                                                   std::function<void(std::string_view)> on_output,
                                                                   support::CancelSource* cancel);

// Where a local file's blocking I/O runs: deps.file_pool, else deps.pool.
boost::asio::thread_pool& file_pool(const Deps& deps);

// A window of a local file's lines, read on the file pool: regular files only, no more of the
// file than the window needs; `stopped` as soon as `cancel` fires, even while the read is stuck
// in the kernel. Throws support::FileReadError.
boost::asio::awaitable<support::WindowRead> read_local_lines(const Deps& deps, fs::path path, support::LineWindow window,
                                                             support::CancelSource* cancel);
// A whole local file the same way, at most kMaxReadFileBytes. Throws support::FileReadError,
// also when it is larger or the read was cancelled.
boost::asio::awaitable<std::string> read_local_file(const Deps& deps, fs::path path, support::CancelSource* cancel);

// What a local path is (exists, folder, size), looked up on the file pool: a hung mount must
// not stall the io thread.
boost::asio::awaitable<FileInfo> stat_local(const Deps& deps, fs::path path);

// The result of a `bash -c` run as the executors report it: output interleaved, the last bytes kept.
struct OutputTail {
  explicit OutputTail(std::size_t limit) : limit(limit) {}
  void add(std::string_view chunk);
  std::size_t limit;
  std::string text;
  bool truncated = false;
};

}  // namespace runtime::executors::detail
