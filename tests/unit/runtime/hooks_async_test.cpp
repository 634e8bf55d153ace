// run_hooks_async: runs on the pool, resumes on the io_context, and the CancelSource kills the hook.
#include "runtime/hooks/hooks_async.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <thread>

#include "../../fixtures/hooks/test_support.hpp"

namespace hooks_test {
namespace {

namespace asio = boost::asio;

class HooksAsync : public HooksTest {};

TEST_F(HooksAsync, RunsOnThePoolAndResumesOnTheCaller) {
  auto set = std::make_shared<const HookSet>(one_command("UserPromptSubmit", "echo context"));
  asio::io_context io;
  asio::thread_pool pool(1);
  HookOutcome out;
  std::thread::id resumed_on;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    out = co_await run_hooks_async(pool, set, HookEvent::UserPromptSubmit, input());
    resumed_on = std::this_thread::get_id();
  }, asio::detached);
  io.run();
  EXPECT_THAT(out.additional_context, ::testing::ElementsAre("context"));
  EXPECT_EQ(resumed_on, std::this_thread::get_id());
  pool.join();
}

TEST_F(HooksAsync, CancelSourceKillsTheHook) {
  auto set = std::make_shared<const HookSet>(one_command("Stop", "sleep 30"));
  asio::io_context io;
  asio::thread_pool pool(1);
  support::CancelSource cancel;
  HookOutcome out;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    out = co_await run_hooks_async(pool, set, HookEvent::Stop, input(), &cancel);
  }, asio::detached);
  asio::steady_timer timer(io, std::chrono::milliseconds(200));
  timer.async_wait([&](auto) { cancel.cancel(); });
  auto t0 = std::chrono::steady_clock::now();
  io.run();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs[0].message, "cancelled");
  pool.join();
}

TEST_F(HooksAsync, NoHooksForTheEventSkipsThePool) {
  auto set = std::make_shared<const HookSet>(one_command("Stop", "true"));
  asio::io_context io;
  asio::thread_pool pool(1);
  HookOutcome out;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    out = co_await run_hooks_async(pool, set, HookEvent::PreToolUse, input());
  }, asio::detached);
  io.run();
  EXPECT_FALSE(out.any_ran());
  pool.join();
}

}  // namespace
}  // namespace hooks_test
