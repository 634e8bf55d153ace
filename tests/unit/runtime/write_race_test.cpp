// A folder swapped for a symlink between the containment check and the write (issue 40 R6):
// the local executor writes the path as it was judged, or not at all, never through the symlink.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <filesystem>
#include <fstream>

#include "runtime/agent/containment.hpp"
#include "runtime/executors/executors.hpp"

namespace fs = std::filesystem;

TEST(WriteRace, AFolderSwappedForASymlinkAfterTheCheckFailsTheWrite) {
  const auto tmp = fs::temp_directory_path() / ("ov-write-race-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / "ws/flip");
  fs::create_directories(tmp / "out");
  // Check time: the path resolves inside.
  const auto judged = runtime::containment::resolve(tmp / "ws/flip/race.txt");
  ASSERT_TRUE(runtime::containment::within(judged, runtime::containment::resolve(tmp / "ws")));
  // The race: the folder becomes a symlink to a folder outside.
  fs::rename(tmp / "ws/flip", tmp / "ws/flip.real");
  fs::create_directory_symlink("../out", tmp / "ws/flip");

  boost::asio::io_context io;
  boost::asio::thread_pool pool(1);
  auto local = runtime::executors::make_local_executor({io.get_executor(), &pool}, tmp / "ws");
  const std::string path = judged.string(), content = "owned\n";  // outlive the coroutine
  std::string error;
  boost::asio::co_spawn(io, local->write_file(path, content, nullptr), [&](std::exception_ptr e) {
    try {
      if (e) std::rethrow_exception(e);
    } catch (const std::exception& x) {
      error = x.what();
    }
  });
  io.run();
  pool.join();
  EXPECT_FALSE(fs::exists(tmp / "out/race.txt")) << "the write never lands outside through the swapped-in symlink";
  EXPECT_NE(error.find("symlink"), std::string::npos) << "the write fails and says why: " << error;
  fs::remove_all(tmp);
}

TEST(WriteRace, AResolvedPathIsWrittenAndItsMissingFoldersCreated) {
  const auto tmp = fs::temp_directory_path() / ("ov-write-ok-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const auto file = runtime::containment::resolve(tmp) / "new/deeper/x.txt";
  boost::asio::io_context io;
  boost::asio::thread_pool pool(1);
  auto local = runtime::executors::make_local_executor({io.get_executor(), &pool}, tmp);
  const std::string path = file.string(), content = "fine\n";  // outlive the coroutine
  bool failed = false;
  boost::asio::co_spawn(io, local->write_file(path, content, nullptr), [&](std::exception_ptr e) { failed = !!e; });
  io.run();
  pool.join();
  EXPECT_FALSE(failed);
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "fine\n");
  fs::remove_all(tmp);
}
