// The stdio transport on real pipes: messages in, flow control out, and a broken output seen as
// a disconnect.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <future>
#include <thread>

#include "acp/transport.hpp"

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fds, O_CLOEXEC) != 0) ADD_FAILURE() << "pipe2 failed";
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  int read_end() const { return fds[0]; }
  int write_end() const { return fds[1]; }
  void close_read() {
    if (fds[0] >= 0) ::close(fds[0]);
    fds[0] = -1;
  }
  void close_write() {
    if (fds[1] >= 0) ::close(fds[1]);
    fds[1] = -1;
  }
};

class StdioTransportTest : public ::testing::Test {
 protected:
  void SetUp() override { std::signal(SIGPIPE, SIG_IGN); }
  // Runs the io_context until `done` or the deadline; returns whether `done` happened.
  template <class Pred>
  bool run_until(Pred done, std::chrono::milliseconds deadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (!done() && std::chrono::steady_clock::now() < end) {
      ioc.restart();
      ioc.run_for(20ms);
    }
    return done();
  }

  asio::io_context ioc;
  Pipe in, out;
  std::vector<acp::IncomingMessage> received;
  int disconnects = 0;
  acp::Transport::Handlers handlers() {
    return {[this](acp::IncomingMessage&& m) { received.push_back(std::move(m)); }, [this] { ++disconnects; }};
  }
};

TEST_F(StdioTransportTest, DeliversParsedMessagesAndReportsTheEndOfInput) {
  auto t = acp::make_stdio_transport(ioc.get_executor(), in.read_end(), out.write_end());
  t->start(handlers());
  const std::string lines = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n{oops\n";
  ASSERT_EQ(::write(in.write_end(), lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  in.close_write();
  ASSERT_TRUE(run_until([&] { return disconnects == 1; }, 3s)) << "the end of stdin must be reported";
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[0].value.at("id"), 1);
  EXPECT_EQ(received[1].problem, acp::IncomingMessage::Problem::Syntax);
}

TEST_F(StdioTransportTest, AnOutputWhoseReaderIsGoneIsADisconnectEvenWhenIdle) {
  auto t = acp::make_stdio_transport(ioc.get_executor(), in.read_end(), out.write_end());
  t->start(handlers());
  out.close_read();  // the editor closed our stdout; stdin stays open
  EXPECT_TRUE(run_until([&] { return disconnects == 1; }, 3s))
      << "a closed stdout must be reported as a disconnect within a second, without waiting for a write";
  in.close_write();
  run_until([&] { return false; }, 100ms);
  EXPECT_EQ(disconnects, 1) << "reported once, even when stdin closes as well";
}

// Zed launches agents with pipes, which hold 64 KiB by default: a session/load replay of many
// MiB would wake the writer and the editor once per 64 KiB (a 20,000-message load: 316 -> 242 ms
// from a native client when the pipe holds 1 MiB).
TEST_F(StdioTransportTest, AnOutputPipeIsGrownToHoldAWholeWriterBatch) {
  ASSERT_EQ(::fcntl(out.write_end(), F_SETPIPE_SZ, 64 * 1024), 64 * 1024) << "the test starts from Linux's default pipe";
  auto t = acp::make_stdio_transport(ioc.get_executor(), in.read_end(), out.write_end());
  EXPECT_GE(::fcntl(out.write_end(), F_GETPIPE_SZ), 1024 * 1024) << "stdout's pipe must be grown to 1 MiB";
  in.close_write();
}

// What `fd` delivers until it has `lines` lines (or 3 s have passed).
static std::string read_lines(int fd, long lines) {
  std::string got;
  char buf[65536];
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (std::count(got.begin(), got.end(), '\n') < lines && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) == 1) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) got.append(buf, static_cast<std::size_t>(n));
    }
  }
  return got;
}

// A replay sends thousands of lines in a row. Written one by one as they come (a lone reply's
// path) each costs a system call or two; held, they are left to the writer and leave in batches.
TEST_F(StdioTransportTest, LinesSentWhileTheOutputIsHeldLeaveTogetherAtTheRelease) {
  auto t = acp::make_stdio_transport(ioc.get_executor(), in.read_end(), out.write_end());
  t->start(handlers());
  t->hold_output();
  t->hold_output();  // holds nest
  for (int i = 0; i < 100; ++i) t->send(R"({"jsonrpc":"2.0","method":"n","params":{"i":)" + std::to_string(i) + "}}");
  t->release_output();
  int unread = -1;
  ASSERT_EQ(::ioctl(out.read_end(), FIONREAD, &unread), 0);
  EXPECT_EQ(unread, 0) << "a line sent while the output is held must be left to the writer, not written at once";
  t->release_output();
  const std::string got = read_lines(out.read_end(), 100);
  std::string expected;
  for (int i = 0; i < 100; ++i) expected += R"({"jsonrpc":"2.0","method":"n","params":{"i":)" + std::to_string(i) + "}}\n";
  EXPECT_TRUE(got == expected) << "once released, every held line must reach the peer, whole and in order; got "
                               << std::count(got.begin(), got.end(), '\n') << " lines";
  in.close_write();
}

TEST_F(StdioTransportTest, AHeldLineStaysHeldWhenTheWriterWakesToCheckTheOutput) {
  auto t = acp::make_stdio_transport(ioc.get_executor(), in.read_end(), out.write_end());
  t->start(handlers());
  t->hold_output();
  t->send(R"({"jsonrpc":"2.0","method":"n"})");
  std::this_thread::sleep_for(700ms);  // past the writer's periodic check of the output (500 ms)
  int unread = -1;
  ASSERT_EQ(::ioctl(out.read_end(), FIONREAD, &unread), 0);
  EXPECT_EQ(unread, 0) << "a held line must wait for the release, whatever wakes the writer meanwhile";
  t->release_output();
  EXPECT_EQ(read_lines(out.read_end(), 1), "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n") << "released, it is written";
  in.close_write();
}

TEST_F(StdioTransportTest, ABulkProducerWaitsWhileThePeerDoesNotReadAndResumesWhenItDoes) {
  auto t = acp::make_stdio_transport(ioc.get_executor(), in.read_end(), out.write_end());
  t->start(handlers());
  const std::string line = "\"" + std::string(64 * 1024, 'x') + "\"";
  for (int i = 0; i < 128; ++i) t->send(line);  // 8 MiB: over the throttle bound
  bool resumed = false;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        co_await t->wait_until_writable(nullptr);
        resumed = true;
      },
      asio::detached);
  EXPECT_FALSE(run_until([&] { return resumed; }, 300ms)) << "the producer must wait while nobody reads the output";

  std::atomic<bool> stop_reading{false};
  std::atomic<std::size_t> read_bytes{0};
  std::thread reader([&] {
    std::vector<char> buf(1 << 16);
    while (!stop_reading) {
      ssize_t n = ::read(out.read_end(), buf.data(), buf.size());
      if (n <= 0) break;
      read_bytes += static_cast<std::size_t>(n);
    }
  });
  EXPECT_TRUE(run_until([&] { return resumed; }, 5s)) << "the producer must resume once the peer reads";
  EXPECT_GT(read_bytes.load(), 4u << 20) << "it resumes only after most of the queue was read";
  t->flush_and_stop();
  stop_reading = true;
  out.close_write();
  reader.join();
  in.close_write();
}

TEST_F(StdioTransportTest, DestroyingTheTransportStopsItsReaderEvenWhenTheInputStaysOpen) {
  {
    auto t = acp::make_stdio_transport(ioc.get_executor(), in.read_end(), out.write_end());
    t->start(handlers());
    run_until([&] { return false; }, 50ms);  // the reader is now waiting on an input nobody closes
    auto destroyed = std::async(std::launch::async, [&t] { t.reset(); });
    if (destroyed.wait_for(3s) != std::future_status::ready) {
      ADD_FAILURE() << "destroying the transport must wake its reader, not wait for stdin to close";
      in.close_write();  // let the stuck destructor finish
      destroyed.get();
      return;
    }
  }
  // A reader left running would consume (and post, through the freed transport) this line.
  const std::string line = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"late\"}\n";
  ASSERT_EQ(::write(in.write_end(), line.data(), line.size()), static_cast<ssize_t>(line.size()));
  std::this_thread::sleep_for(100ms);
  char buf[256];
  ASSERT_EQ(::fcntl(in.read_end(), F_SETFL, O_NONBLOCK), 0);
  EXPECT_EQ(::read(in.read_end(), buf, sizeof buf), static_cast<ssize_t>(line.size()))
      << "after the transport is destroyed its reader thread must be gone (joined), not left reading stdin";
  EXPECT_TRUE(received.empty());
}

// Short lines sent while nothing is queued are written by the sender itself; bursts, lines larger
// than a pipe and whatever a socket does not take at once go through the writer. Whatever path
// each line takes, the peer must get every line whole and in the order sent, over a pipe (Zed
// launches agents with pipes) and over a socket (Node's child_process gives a socketpair).
TEST_F(StdioTransportTest, EveryLineArrivesWholeAndInOrderOverAPipeAndASocketWhateverThePeersPace) {
  for (const bool socket : {false, true}) {
    SCOPED_TRACE(socket ? "stdout is a socket" : "stdout is a pipe");
    int fds[2];
    if (socket) {
      ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
      const int small = 4096;  // so that sends are often taken in part
      ::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    } else {
      ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    }
    std::string expected;
    std::string got;
    std::thread reader([&, peer = fds[0]] {
      std::vector<char> buf(1 << 16);
      for (int reads = 0;; ++reads) {
        if (reads % 8 == 0) std::this_thread::sleep_for(1ms);  // a peer that falls behind now and then
        const ssize_t n = ::read(peer, buf.data(), reads % 3 == 0 ? 100 : buf.size());
        if (n <= 0) break;
        got.append(buf.data(), static_cast<std::size_t>(n));
      }
    });
    {
      Pipe input;
      auto t = acp::make_stdio_transport(ioc.get_executor(), input.read_end(), fds[1]);
      t->start(handlers());
      for (int i = 0; i < 600; ++i) {
        std::string line = "{\"n\":" + std::to_string(i) + ",\"pad\":\"" +
                           std::string(i % 50 == 0 ? 100 * 1024 : (i * 37) % 3000, 'a' + i % 26) + "\"}";
        expected += line + "\n";
        t->send(std::move(line));
        if (i % 10 == 0) std::this_thread::sleep_for(200us);  // let the pipe drain: replies alone
      }
      t->flush_and_stop();
    }
    ::close(fds[1]);
    reader.join();
    ::close(fds[0]);
    ASSERT_EQ(got.size(), expected.size()) << "every byte sent must reach the peer";
    EXPECT_TRUE(got == expected) << "the lines must arrive whole and in the order they were sent";
  }
}

}  // namespace
