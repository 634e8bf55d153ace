#pragma once
// A thread pool whose threads start on first use (a server that never needs them pays nothing
// at start-up). Blocking file I/O gets one of its own, apart from the pool that turns, hooks and
// containment checks use: a slow disk or a hung network mount then stalls only other file reads.
#include <boost/asio/thread_pool.hpp>

#include <cstddef>
#include <memory>
#include <mutex>

namespace support {

class LazyThreadPool {
 public:
  explicit LazyThreadPool(std::size_t threads) : threads_(threads) {}

  boost::asio::thread_pool& get() {
    std::call_once(started_, [this] { pool_ = std::make_unique<boost::asio::thread_pool>(threads_); });
    return *pool_;
  }

 private:
  std::size_t threads_;
  std::once_flag started_;
  std::unique_ptr<boost::asio::thread_pool> pool_;
};

}  // namespace support
