#pragma once
// Runs a blocking function on a worker pool and resumes the caller on its own executor, so
// the io_context thread never blocks (hook scripts, local commands, git).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <type_traits>

namespace bridge::process {

template <class F>
boost::asio::awaitable<std::invoke_result_t<F>> run_blocking(boost::asio::thread_pool& pool, F fn) {
  using R = std::invoke_result_t<F>;
  co_return co_await boost::asio::co_spawn(
      pool.get_executor(), [fn = std::move(fn)]() mutable -> boost::asio::awaitable<R> { co_return fn(); },
      boost::asio::use_awaitable);
}

}  // namespace bridge::process
