#pragma once
// The agent loop's way to run hooks: on the blocking pool, resuming on the caller's executor,
// with the turn's CancelSource killing the running hook's process group.
//
//   auto out = co_await hooks::run_hooks_async(pool_, engine_hooks /* shared_ptr<const HookSet> */,
//                                              hooks::HookEvent::PreToolUse, input, &cancel);
//
// The HookSet is held by shared_ptr so a config reload can swap the set while hooks run.
// Use HookSet::has(event) first to skip the thread hop when nothing is configured.
#include <atomic>
#include <memory>

#include "support/cancellation.hpp"
#include "support/run_blocking.hpp"
#include "runtime/hooks/hooks.hpp"

namespace runtime::hooks {

inline boost::asio::awaitable<HookOutcome> run_hooks_async(boost::asio::thread_pool& pool,
                                                           std::shared_ptr<const HookSet> set, HookEvent event,
                                                           HookInput input, support::CancelSource* cancel = nullptr,
                                                           std::shared_ptr<const HookPlace> place = nullptr) {
  if (!set || !set->has(event)) co_return HookOutcome{};
  auto flag = std::make_shared<std::atomic<bool>>(false);
  support::CancelSource::Registration reg;
  if (cancel) reg = cancel->on_cancel([flag] { flag->store(true); });
  // A named job and a named result: GCC 12 mishandles temporaries inside co_await expressions
  // (a lambda temporary there was destroyed twice).
  auto job = [set, event, input = std::move(input), flag, place]() {
    return run_hooks(*set, event, input, flag.get(), place.get());
  };
  HookOutcome out = co_await support::run_blocking(pool, std::move(job));
  co_return out;
}

}  // namespace runtime::hooks
