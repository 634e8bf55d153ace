#pragma once
// Runs a blocking function on a worker pool and resumes the caller on its own executor, so
// the io_context thread never blocks (hook scripts, local commands, git). Only the function
// runs on the pool: no coroutine frame ever lives on a pool thread, and the waiting side is
// woken by an event touched only from its own executor.
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>

#include "support/blocking_work.hpp"
#include "support/one_shot_event.hpp"

namespace support {

template <class F>
boost::asio::awaitable<std::invoke_result_t<F>> run_blocking(boost::asio::thread_pool& pool, F fn) {
  using R = std::invoke_result_t<F>;
  struct State {
    explicit State(boost::asio::any_io_executor ex) : done(ex) {}
    OneShotEvent done;
    std::optional<R> result;
    std::exception_ptr error;
  };
  auto state = std::make_shared<State>(co_await boost::asio::this_coro::executor);
  boost::asio::post(pool, [state, fn = std::move(fn), token = BlockingWorkToken()]() mutable {
    try {
      state->result.emplace(fn());
    } catch (...) {
      state->error = std::current_exception();
    }
    boost::asio::post(state->done.executor(), [state] { state->done.set(); });
    token.release();
  });
  co_await state->done.wait();
  if (state->error) std::rethrow_exception(state->error);
  co_return std::move(*state->result);
}

}  // namespace support
