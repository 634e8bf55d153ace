#pragma once
// Runs a blocking function on a worker pool and resumes the caller on its own executor, so
// the io_context thread never blocks (hook scripts, local commands, git). Only the function
// runs on the pool: no coroutine frame ever lives on a pool thread, and the waiting side is
// woken by a timer touched only from its own executor.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>

namespace bridge::process {

template <class F>
boost::asio::awaitable<std::invoke_result_t<F>> run_blocking(boost::asio::thread_pool& pool, F fn) {
  using R = std::invoke_result_t<F>;
  struct State {
    explicit State(boost::asio::any_io_executor ex) : timer(ex, boost::asio::steady_timer::time_point::max()) {}
    boost::asio::steady_timer timer;
    bool done = false;
    std::optional<R> result;
    std::exception_ptr error;
  };
  auto state = std::make_shared<State>(co_await boost::asio::this_coro::executor);
  boost::asio::post(pool, [state, fn = std::move(fn)]() mutable {
    try {
      state->result.emplace(fn());
    } catch (...) {
      state->error = std::current_exception();
    }
    boost::asio::post(state->timer.get_executor(), [state] {
      state->done = true;
      state->timer.cancel();
    });
  });
  while (!state->done) co_await state->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  if (state->error) std::rethrow_exception(state->error);
  co_return std::move(*state->result);
}

}  // namespace bridge::process
