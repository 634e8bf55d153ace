// support::PendingCalls (the request-id -> waiter map of acp::Connection and bridge::mcp::Client)
// and support::OneShotEvent, driven on a real io_context.
#include "support/pending_calls.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

#include "support/one_shot_event.hpp"

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct TestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
using Calls = support::PendingCalls<std::string, TestError>;

// What a waiter saw once its call was done.
struct Outcome {
  bool woke = false;
  std::string result;
  std::optional<std::string> error;
};

void wait_for(asio::io_context& io, Calls::CallPtr call, Outcome& out) {
  asio::co_spawn(
      io,
      [call, &out]() -> asio::awaitable<void> {
        co_await call->wait();
        out.woke = true;
        out.result = call->result;
        if (call->error) out.error = call->error->what();
      },
      asio::detached);
}

Calls::TimeoutError timeout_error() {
  return [](const std::string& text) { return TestError(text); };
}

TEST(PendingCalls, IdsCountUpAndAnAnswerWakesItsCallerOnly) {
  asio::io_context io;
  Calls calls(io.get_executor());
  auto [id1, call1] = calls.add();
  auto [id2, call2] = calls.add();
  EXPECT_EQ(id1, 1);
  EXPECT_EQ(id2, 2);
  Outcome out1, out2;
  wait_for(io, call1, out1);
  wait_for(io, call2, out2);
  io.poll();
  EXPECT_FALSE(out1.woke) << "a call waits until it is answered";

  auto taken = calls.take(id1);
  ASSERT_EQ(taken, call1) << "take() finds the call by its id";
  EXPECT_EQ(calls.take(id1), nullptr) << "an answer is taken once; a second reply to the id finds nothing";
  taken->result = "answer";
  taken->resolve();
  io.poll();
  EXPECT_TRUE(out1.woke);
  EXPECT_EQ(out1.result, "answer") << "the caller gets the result it was resolved with";
  EXPECT_FALSE(out1.error);
  EXPECT_FALSE(out2.woke) << "resolving one call wakes no other";
  EXPECT_EQ(calls.take(99), nullptr) << "an unknown id finds nothing";
}

TEST(PendingCalls, FailAllOnCloseWakesEveryCallerWithTheError) {
  asio::io_context io;
  Calls calls(io.get_executor());
  auto [id1, call1] = calls.add();
  auto [id2, call2] = calls.add(Clock::now() + 1h, "slow: no answer");
  Outcome out1, out2;
  wait_for(io, call1, out1);
  wait_for(io, call2, out2);
  io.poll();
  calls.fail_all(TestError("the peer is gone"));
  io.run_for(1s);
  EXPECT_TRUE(out1.woke && out2.woke) << "closing fails every pending call instead of leaving it hanging";
  EXPECT_EQ(out1.error.value_or(""), "the peer is gone");
  EXPECT_EQ(out2.error.value_or(""), "the peer is gone");
  EXPECT_TRUE(calls.empty()) << "a closed map forgets its calls";
  EXPECT_EQ(calls.take(id2), nullptr);
}

TEST(PendingCalls, ACallTimesOutAtItsDeadlineWithItsOwnText) {
  asio::io_context io;
  Calls calls(io.get_executor(), timeout_error());
  auto [fast_id, fast] = calls.add(Clock::now() + 30ms, "fast: no answer within 30 ms");
  auto [slow_id, slow] = calls.add(Clock::now() + 1h, "slow: no answer");
  Outcome fast_out, slow_out;
  wait_for(io, fast, fast_out);
  wait_for(io, slow, slow_out);
  const auto started = Clock::now();
  io.run_for(400ms);
  EXPECT_TRUE(fast_out.woke) << "a call whose deadline passed fails by itself";
  EXPECT_EQ(fast_out.error.value_or(""), "fast: no answer within 30 ms");
  EXPECT_FALSE(slow_out.woke) << "a call before its deadline keeps waiting";
  EXPECT_GE(Clock::now() - started, 30ms);
  calls.fail_all(TestError("closed"));
  io.run_for(100ms);
}

TEST(PendingCalls, ADeadlineBeyondTheSweepStillFires) {
  // The one timer fires at least every 100 ms sweep and is armed again for the next deadline:
  // a call whose deadline is several sweeps away still times out.
  asio::io_context io;
  Calls calls(io.get_executor(), timeout_error());
  auto [id, call] = calls.add(Clock::now() + 350ms, "late: no answer");
  Outcome out;
  wait_for(io, call, out);
  io.run_for(2s);
  EXPECT_TRUE(out.woke) << "a deadline a few sweeps away times out (the timer is re-armed after each sweep)";
  EXPECT_EQ(out.error.value_or(""), "late: no answer");
}

TEST(PendingCalls, AnAnsweredMapLetsItsIoContextEnd) {
  // run() returns once nothing is pending: the deadline timer of answered calls does not hold
  // the io_context until their (distant) deadlines.
  asio::io_context io;
  Calls calls(io.get_executor(), timeout_error());
  auto [id, call] = calls.add(Clock::now() + 1h, "never");
  Outcome out;
  wait_for(io, call, out);
  asio::post(io, [&calls, id = id] {
    auto c = calls.take(id);
    c->result = "done";
    c->resolve();
  });
  const auto started = Clock::now();
  io.run_for(5s);  // returns early when the io_context runs out of work
  const auto took = Clock::now() - started;
  EXPECT_TRUE(out.woke);
  EXPECT_LT(took, 2s) << "run() ends soon after the last answer (within a sweep), not at the call's deadline";
}

TEST(PendingCalls, WithoutATimeoutErrorDeadlinesAreNotWatched) {
  asio::io_context io;
  Calls calls(io.get_executor());
  auto [id, call] = calls.add(Clock::now() + 10ms, "x");
  Outcome out;
  wait_for(io, call, out);
  io.run_for(200ms);
  EXPECT_FALSE(out.woke) << "a map that makes no timeout errors (acp::Connection) never times a call out";
  calls.fail_all(TestError("closed"));
  io.run_for(100ms);
  EXPECT_TRUE(out.woke);
}

TEST(OneShotEvent, SetWakesEveryWaiterAndLaterWaitsReturnAtOnce) {
  asio::io_context io;
  support::OneShotEvent event(io.get_executor());
  int woke = 0;
  auto waiter = [&]() -> asio::awaitable<void> {
    co_await event.wait();
    ++woke;
  };
  asio::co_spawn(io, waiter, asio::detached);
  asio::co_spawn(io, waiter, asio::detached);
  io.poll();
  EXPECT_EQ(woke, 0) << "nobody wakes before set()";
  EXPECT_FALSE(event.is_set());
  event.set();
  io.poll();
  EXPECT_EQ(woke, 2) << "set() wakes every waiter";
  EXPECT_TRUE(event.is_set());
  asio::co_spawn(io, waiter, asio::detached);
  io.restart();  // it ran out of work: poll() would do nothing more
  io.poll();
  EXPECT_EQ(woke, 3) << "a wait after set() returns at once";
}

TEST(OneShotEvent, CancelEndsOneWaitOnlyAndResetArmsItAgain) {
  asio::io_context io;
  support::OneShotEvent event(io.get_executor());
  support::CancelSource cancel;
  std::optional<bool> cancelled_saw, other_saw;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> { cancelled_saw = co_await event.wait(&cancel); }, asio::detached);
  asio::co_spawn(io, [&]() -> asio::awaitable<void> { other_saw = co_await event.wait(nullptr); }, asio::detached);
  io.poll();
  cancel.cancel();
  io.poll();
  ASSERT_TRUE(cancelled_saw.has_value()) << "a cancelled wait returns";
  EXPECT_FALSE(*cancelled_saw) << "and says the event was not set";
  EXPECT_FALSE(other_saw.has_value()) << "the other waiter, woken by the cancel, waits again";
  event.set();
  io.poll();
  EXPECT_TRUE(other_saw.value_or(false));

  event.reset();
  EXPECT_FALSE(event.is_set());
  bool woke = false;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await event.wait();
    woke = true;
  }, asio::detached);
  io.restart();  // it ran out of work: poll() would do nothing more
  io.poll();
  EXPECT_FALSE(woke) << "after reset() a wait parks until the next set()";
  event.set();
  io.poll();
  EXPECT_TRUE(woke);
}

}  // namespace
