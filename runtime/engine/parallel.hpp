#pragma once
// A minimal parallel loop for the engine's loaders (internal to runtime/engine).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <future>
#include <thread>
#include <vector>

namespace runtime::engine::detail {

// Runs fn(i) once for every i in [0, n), on the calling thread and one to three helper threads
// (one per further core, at least one). Indices are handed out in order, one at a time, so put
// the long tasks first. fn(i) must only write state owned by index i; callers merge the
// per-index results in index order afterwards, so the outcome never depends on timing. An
// exception from any fn(i) is rethrown here.
template <class Fn>
void parallel_for(std::size_t n, Fn&& fn) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) fn(i);
  };
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 2u, 4u);  // 0 when unknown
  const std::size_t helpers = std::min<std::size_t>(n > 0 ? n - 1 : 0, threads - 1);
  std::vector<std::future<void>> running;
  for (std::size_t h = 0; h < helpers; ++h)
    running.push_back(std::async(std::launch::async, work));
  work();
  for (auto& f : running) f.get();
}

}  // namespace runtime::engine::detail
