#pragma once
// Something coroutines on one executor wait for, set once (Asio's chat_server idiom: a timer
// parked at time_point::max() and cancelled to wake every waiter). reset() arms it again for a
// next round (a server that starts again, an output queue that fills again). Touch it only from
// its own executor.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "support/cancellation.hpp"

namespace support {

class OneShotEvent {
 public:
  explicit OneShotEvent(boost::asio::any_io_executor executor)
      : timer_(executor, boost::asio::steady_timer::time_point::max()) {}

  void set() {
    set_ = true;
    timer_.cancel();
  }
  bool is_set() const { return set_; }
  // Unset again: later waits park until the next set(). A waiter of the last round that has not
  // run yet parks too, so reset only when the round's waiters look again at what they wait for.
  void reset() { set_ = false; }

  boost::asio::awaitable<void> wait() {
    while (!set_) co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }

  // As wait(), but gives up when `cancel` fires (waking the other waiters, who wait again).
  // True when the event is set.
  boost::asio::awaitable<bool> wait(CancelSource* cancel) {
    if (!cancel) {
      co_await wait();
      co_return true;
    }
    auto wake = cancel->on_cancel([this] { timer_.cancel(); });
    while (!set_ && !cancel->cancelled()) co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    co_return set_;
  }

  boost::asio::any_io_executor executor() { return timer_.get_executor(); }

 private:
  boost::asio::steady_timer timer_;
  bool set_ = false;
};

}  // namespace support
