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

// The result of a `bash -c` run as the executors report it: output interleaved, the last bytes kept.
struct OutputTail {
  explicit OutputTail(std::size_t limit) : limit(limit) {}
  void add(std::string_view chunk);
  std::size_t limit;
  std::string text;
  bool truncated = false;
};

}  // namespace runtime::executors::detail
