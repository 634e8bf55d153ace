#pragma once
// Runs a blocking function on a worker pool and resumes the caller on its own executor, so
// the io_context thread never blocks (hook scripts, local commands, git). Only the function
// runs on the pool: no coroutine frame ever lives on a pool thread, and the waiting side is
// woken by an event touched only from its own executor.
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <atomic>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>

#include "support/blocking_work.hpp"
#include "support/cancellation.hpp"
#include "support/one_shot_event.hpp"

namespace support {

namespace detail {

template <class R>
struct BlockingState {
  explicit BlockingState(boost::asio::any_io_executor ex) : done(ex) {}
  OneShotEvent done;
  std::optional<R> result;
  std::exception_ptr error;
  std::atomic<bool> stop{false};  // the caller gave up: the function may end early
};

// Runs `fn()` on the pool; the state (shared) outlives a caller that stopped waiting.
template <class R, class F>
void post_blocking(boost::asio::thread_pool& pool, std::shared_ptr<BlockingState<R>> state, F fn) {
  boost::asio::post(pool, [state, fn = std::move(fn), token = BlockingWorkToken()]() mutable {
    try {
      state->result.emplace(fn());
    } catch (...) {
      state->error = std::current_exception();
    }
    boost::asio::post(state->done.executor(), [state] { state->done.set(); });
    token.release();
  });
}

}  // namespace detail

template <class F>
boost::asio::awaitable<std::invoke_result_t<F>> run_blocking(boost::asio::thread_pool& pool, F fn) {
  using R = std::invoke_result_t<F>;
  auto state = std::make_shared<detail::BlockingState<R>>(co_await boost::asio::this_coro::executor);
  detail::post_blocking<R>(pool, state, std::move(fn));
  co_await state->done.wait();
  if (state->error) std::rethrow_exception(state->error);
  co_return std::move(*state->result);
}

// As run_blocking for work that can stop early: `fn(stop)` gets a flag that `cancel` sets, to
// check between steps, and the caller stops waiting as soon as `cancel` fires (a read stuck in
// the kernel, on a hung network mount, finishes on its own and its result is dropped).
// nullopt when cancelled.
template <class F>
boost::asio::awaitable<std::optional<std::invoke_result_t<F, const std::atomic<bool>&>>> run_blocking_cancellable(
    boost::asio::thread_pool& pool, CancelSource* cancel, F fn) {
  using R = std::invoke_result_t<F, const std::atomic<bool>&>;
  auto state = std::make_shared<detail::BlockingState<R>>(co_await boost::asio::this_coro::executor);
  detail::post_blocking<R>(pool, state, [state_ref = state.get(), fn = std::move(fn)]() mutable {
    return fn(state_ref->stop);
  });
  if (!co_await state->done.wait(cancel)) {
    state->stop.store(true, std::memory_order_relaxed);
    co_return std::nullopt;
  }
  if (state->error) std::rethrow_exception(state->error);
  co_return std::move(*state->result);
}

}  // namespace support
