#pragma once
// The calls sent to a peer and not yet answered, by request id (1, 2, ...): each caller waits on
// its own call until the answer, an error, its deadline or fail_all. The JSON-RPC layers of
// both sides use it: acp::Connection (calls to the editor) and bridge::mcp::Client (requests
// to an MCP server). Touch it only from its executor.
//
// Deadlines share one timer, armed for the earliest deadline (or the next sweep) and moved only
// when a call needs it sooner: a timer per call cost two timerfd_settime calls per MCP call.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "support/one_shot_event.hpp"

namespace support {

template <class Result, class Error>
class PendingCalls {
 public:
  using Clock = std::chrono::steady_clock;

  struct Call {
    Call(boost::asio::any_io_executor ex, Clock::time_point deadline, std::string timeout_text)
        : deadline(deadline), timeout_text(std::move(timeout_text)), answered_(std::move(ex)) {}
    const Clock::time_point deadline;  // time_point::max(): none
    const std::string timeout_text;    // the message of the error its deadline makes
    Result result{};
    std::optional<Error> error;

    bool done() const { return answered_.is_set(); }
    // Wakes the caller: `result` or `error` is its outcome.
    void resolve() { answered_.set(); }
    boost::asio::awaitable<void> wait() { return answered_.wait(); }

   private:
    OneShotEvent answered_;
  };
  using CallPtr = std::shared_ptr<Call>;
  // The error of a call whose deadline passed, from its timeout_text.
  using TimeoutError = std::function<Error(const std::string& timeout_text)>;

  explicit PendingCalls(boost::asio::any_io_executor ex, TimeoutError timeout_error = nullptr)
      : ex_(std::move(ex)), timeout_error_(std::move(timeout_error)), timer_(ex_, Clock::time_point::max()) {}
  PendingCalls(const PendingCalls&) = delete;
  PendingCalls& operator=(const PendingCalls&) = delete;

  // A new call under the next id. With a deadline (and a TimeoutError) it fails by itself then.
  std::pair<std::int64_t, CallPtr> add(Clock::time_point deadline = Clock::time_point::max(),
                                       std::string timeout_text = {}) {
    const std::int64_t id = next_id_++;
    auto call = std::make_shared<Call>(ex_, deadline, std::move(timeout_text));
    calls_.emplace(id, call);
    if (deadline != Clock::time_point::max() && timeout_error_) watch_deadline(deadline);
    return {id, std::move(call)};
  }

  // The call waiting for the answer `id`, removed; null when there is none (unknown or given up).
  CallPtr take(std::int64_t id) {
    auto it = calls_.find(id);
    if (it == calls_.end()) return nullptr;
    auto call = std::move(it->second);
    calls_.erase(it);
    return call;
  }
  void erase(std::int64_t id) { calls_.erase(id); }
  bool empty() const { return calls_.empty(); }

  // The peer is gone: every call not yet done fails with `error`, and all are forgotten.
  void fail_all(const Error& error) {
    timer_.cancel();  // nothing left to time out; an armed timer would keep the io_context running
    timer_.expires_at(Clock::time_point::max());
    auto calls = std::move(calls_);
    calls_.clear();
    for (auto& [_, call] : calls) {
      if (call->done()) continue;
      call->error = error;
      call->resolve();
    }
  }

 private:
  // The timer looks at least this often while calls are pending, and stops when none is: an
  // idle peer never holds its io_context for longer than this (a CLI's run() returns).
  static constexpr auto kDeadlineSweep = std::chrono::milliseconds(100);

  void watch_deadline(Clock::time_point deadline) {
    deadline = std::min(deadline, Clock::now() + kDeadlineSweep);
    if (deadline >= timer_.expiry()) return;  // it fires soon enough already
    timer_.expires_at(deadline);              // the earlier wait ends as aborted
    timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
      if (ec || alive.expired()) return;  // moved, or the map is going
      time_out_due_calls();
    });
  }

  void time_out_due_calls() {
    const auto now = Clock::now();
    auto next = Clock::time_point::max();
    for (auto& [_, call] : calls_) {
      if (call->done()) continue;
      if (call->deadline <= now) {
        call->error = timeout_error_(call->timeout_text);
        call->resolve();
      } else {
        next = std::min(next, call->deadline);
      }
    }
    timer_.expires_at(Clock::time_point::max());
    if (next != Clock::time_point::max()) watch_deadline(next);
  }

  boost::asio::any_io_executor ex_;
  TimeoutError timeout_error_;
  boost::asio::steady_timer timer_;
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, CallPtr> calls_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // the timer's handler outlives us
};

}  // namespace support
