// The stdio MCP transport's teardown: a close() still waiting for its server when the server
// shuts down (kill_now, e.g. the editor quits right after closing a session) must end that server
// and nothing else.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "bridge/mcp/transport.hpp"

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// Runs `ioc` until `done` or `limit`, whichever comes first.
void run_until(asio::io_context& ioc, const bool& done, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done && std::chrono::steady_clock::now() < until) {
    ioc.restart();
    ioc.run_for(10ms);
  }
}

pid_t read_pid(const fs::path& file, asio::io_context& ioc) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(file);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    ioc.restart();
    ioc.run_for(10ms);
  }
  return -1;
}

}  // namespace

TEST(McpStdioTransport, AShutdownDuringACloseEndsTheServerAndReapsNoOtherChild) {
  asio::io_context ioc;
  const fs::path pid_file = fs::temp_directory_path() / ("mcp-stdio-pid-" + std::to_string(::getpid()));
  fs::remove(pid_file);

  // A child of ours that has exited but is not reaped yet: its status belongs to whoever
  // started it, and no MCP server's teardown may take it.
  const pid_t sibling = ::fork();
  ASSERT_GE(sibling, 0);
  if (sibling == 0) ::_exit(7);
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(sibling), &info, WEXITED | WNOWAIT), 0);

  // A server that ignores both stdin EOF and SIGTERM, so close() is still waiting when the
  // shutdown comes.
  bridge::mcp::StdioSpec spec;
  spec.command = "sh";
  spec.args = {"-c", "echo $$ > '" + pid_file.string() + "'; trap '' TERM; exec sleep 30"};
  auto transport = bridge::mcp::make_stdio_transport(ioc.get_executor(), spec, "stubborn");
  bool started = false;
  asio::co_spawn(ioc, transport->start({}, 5s), [&](std::exception_ptr e) {
    ASSERT_FALSE(e) << "the server did not start";
    started = true;
  });
  run_until(ioc, started, 5s);
  ASSERT_TRUE(started);
  const pid_t server = read_pid(pid_file, ioc);
  fs::remove(pid_file);
  ASSERT_GT(server, 0) << "the server never wrote its pid";

  bool closed = false;
  asio::co_spawn(ioc, transport->close(), [&](std::exception_ptr) { closed = true; });
  ioc.restart();
  ioc.run_for(50ms);  // close() is now in its wait for the server to leave on stdin EOF
  ASSERT_FALSE(closed);
  transport->kill_now();
  const auto killed_at = std::chrono::steady_clock::now();
  run_until(ioc, closed, 3s);
  EXPECT_TRUE(closed) << "close() did not finish after kill_now()";
  EXPECT_LT(std::chrono::steady_clock::now() - killed_at, 400ms)
      << "close() kept waiting out its own grace periods after kill_now() had taken the server over";

  // The sibling's status is still there for its owner.
  int status = 0;
  EXPECT_EQ(::waitpid(sibling, &status, 0), sibling) << "an MCP server's teardown reaped a child that was not its own";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7);

  // kill_now's SIGTERM is ignored, so its SIGKILL must follow.
  bool gone = false;
  const auto until = std::chrono::steady_clock::now() + 3s;
  while (!gone && std::chrono::steady_clock::now() < until) {
    ::waitpid(server, nullptr, WNOHANG);
    gone = ::kill(-server, 0) != 0 && errno == ESRCH;
    ioc.restart();
    ioc.run_for(10ms);
  }
  EXPECT_TRUE(gone) << "the server that ignores SIGTERM outlived kill_now()";
  if (!gone) ::kill(-server, SIGKILL);
}
