#pragma once
// Shared set-up of the executor kinds' unit tests (executors_local_test.cpp,
// executors_virtual_test.cpp, executors_ssh_test.cpp): a temp folder, an io_context that runs the
// executor's coroutines, the pools the executors do blocking work on, and helpers that run one
// call and say what it answered or threw.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <filesystem>
#include <future>
#include <random>
#include <string>

#include "runtime/executors/executors.hpp"
#include "support/file_io.hpp"

namespace executor_test {

namespace asio = boost::asio;
namespace fs = std::filesystem;

inline std::string read_text(const fs::path& p) { return support::read_file(p).value_or("<unreadable>"); }

inline void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  support::write_file_atomically_unsynced(p, text, 0644);
}

inline unsigned mode_of(const fs::path& p) {
  return static_cast<unsigned>(fs::status(p).permissions()) & 07777;
}

class ExecutorTest : public ::testing::Test {
 protected:
  ExecutorTest() {
    dir = fs::temp_directory_path() /
          ("ov-extest-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
    dir = fs::canonical(dir);
  }
  ~ExecutorTest() override {
    pool.join();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  runtime::executors::Deps deps() {
    return {ioc.get_executor(), &pool, std::make_shared<support::LazyThreadPool>(2)};
  }

  // Runs `a` to its end (at most 20 s of io time) and answers its result; an exception it threw
  // is thrown here.
  template <class T>
  T run(asio::awaitable<T> a) {
    auto f = asio::co_spawn(ioc, std::move(a), asio::use_future);
    // In slices: other work on ioc (a command started in the background) may outlive this call.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready && std::chrono::steady_clock::now() < until) {
      ioc.restart();
      ioc.run_for(std::chrono::milliseconds(10));
    }
    if (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      throw std::runtime_error("the executor call did not finish within 20 s");
    return f.get();
  }

  // The ExecutorError message `a` ends with; "" when it ended without one.
  template <class T>
  std::string error_of(asio::awaitable<T> a) {
    try {
      run(std::move(a));
      return "";
    } catch (const runtime::ExecutorError& e) {
      return e.what();
    }
  }

  fs::path dir;
  asio::io_context ioc;
  asio::thread_pool pool{2};
};

}  // namespace executor_test
