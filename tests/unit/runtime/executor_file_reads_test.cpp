// The local and virtual executors' file reads (the read_file tool without the editor): only
// regular files, on threads of their own (the shared pool may be full), and cancellable.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <fstream>
#include <future>
#include <random>

#include "runtime/executors/executors.hpp"
#include "support/run_blocking.hpp"

namespace asio = boost::asio;
namespace fs = std::filesystem;
using runtime::ExecutorError;
using runtime::executors::Deps;

namespace {

class ExecutorFileReads : public ::testing::Test {
 protected:
  ExecutorFileReads() {
    dir = fs::temp_directory_path() / ("ov-exreads-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
    std::ofstream(dir / "notes.txt") << "one\ntwo\nthree\n";
  }
  ~ExecutorFileReads() override {
    release_shared_pool.set_value();
    shared_pool.join();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  Deps deps() { return {ioc.get_executor(), &shared_pool, std::make_shared<support::LazyThreadPool>(2)}; }

  // Runs `a` for at most 5 s of io time; nullopt when it did not finish by then.
  template <class T>
  std::optional<T> run(asio::awaitable<T> a) {
    auto f = asio::co_spawn(ioc, std::move(a), asio::use_future);
    ioc.restart();
    ioc.run_for(std::chrono::seconds(5));
    if (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return std::nullopt;
    return f.get();
  }

  // Every thread of the shared pool waits until the test ends (the pool turns and containment
  // checks use is busy with a slow hook, a long command, another session's work).
  void fill_shared_pool() {
    auto released = release_shared_pool.get_future().share();
    asio::post(shared_pool, [released] { released.wait(); });
  }

  fs::path dir;
  asio::io_context ioc;
  asio::thread_pool shared_pool{1};
  std::promise<void> release_shared_pool;
};

// The error a read of `path` ends with ("" when it read): a window (read_file) or the whole file
// (apply_patch).
asio::awaitable<std::string> read_error(runtime::Executor& ex, std::string path, bool whole = false) {
  try {
    if (whole) co_await ex.read_file(path, nullptr);
    else co_await ex.read_lines(path, {}, nullptr);
    co_return std::string();
  } catch (const ExecutorError& e) {
    co_return std::string(e.what());
  }
}

}  // namespace

TEST_F(ExecutorFileReads, LocalReadsRunWhileTheSharedPoolIsBusy) {
  fill_shared_pool();
  auto local = runtime::executors::make_local_executor(deps(), dir);
  auto read = run(local->read_lines("notes.txt", {2, 1}, nullptr));
  ASSERT_TRUE(read) << "a file read must not wait for the pool that turns and containment checks share";
  EXPECT_EQ(read->text, "two\n");
  auto whole = run(local->read_file("notes.txt", nullptr));
  ASSERT_TRUE(whole) << "nor must apply_patch's whole-file read";
  EXPECT_EQ(*whole, "one\ntwo\nthree\n");
}

TEST_F(ExecutorFileReads, LocalAndVirtualRefuseAFifoNamingIt) {
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  auto local = runtime::executors::make_local_executor(deps(), dir);
  auto local_error = run(read_error(*local, "pipe"));
  ASSERT_TRUE(local_error) << "a FIFO with no writer must not block the read";
  EXPECT_NE(local_error->find((dir / "pipe").string()), std::string::npos) << *local_error;
  EXPECT_NE(local_error->find("FIFO"), std::string::npos) << *local_error;
  auto docs = runtime::executors::make_virtual_executor(deps(), "docs", "virtual", dir, "", true);
  auto virtual_error = run(read_error(*docs, "/pipe"));
  ASSERT_TRUE(virtual_error) << "virtual executors read local files: the same rule";
  EXPECT_NE(virtual_error->find("FIFO"), std::string::npos) << *virtual_error;
  auto apply_patch_read = run(read_error(*local, "/dev/zero", true));
  ASSERT_TRUE(apply_patch_read) << "/dev/zero never ends: a whole-file read must refuse it too";
  EXPECT_NE(apply_patch_read->find("character device"), std::string::npos) << *apply_patch_read;
}

// A read stuck in the kernel (a hung network mount): the caller is answered when the turn is
// cancelled, and the stuck thread's result is dropped when it comes.
TEST(RunBlockingCancellable, TheCallerStopsWaitingWhenCancelledAndTheWorkIsToldToStop) {
  asio::io_context ioc;
  asio::thread_pool pool{1};
  std::promise<void> unstick;
  auto stuck = unstick.get_future().share();
  std::atomic<bool> saw_stop{false};
  support::CancelSource cancel;
  asio::steady_timer later(ioc, std::chrono::milliseconds(50));
  later.async_wait([&](boost::system::error_code) { cancel.cancel(); });
  auto job = [stuck, &saw_stop](const std::atomic<bool>& stop) {
    stuck.wait();
    saw_stop = stop.load();
    return 1;
  };
  auto f = asio::co_spawn(ioc, support::run_blocking_cancellable(pool, &cancel, job), asio::use_future);
  ioc.run_for(std::chrono::seconds(5));
  const bool answered = f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  unstick.set_value();
  pool.join();
  ASSERT_TRUE(answered) << "a cancel must end the wait, though the work is still stuck";
  EXPECT_FALSE(f.get().has_value());
  EXPECT_TRUE(saw_stop) << "the work learns it may stop (a chunked read checks between chunks)";
  ioc.restart();
  ioc.poll();  // the late result is posted and dropped
}
