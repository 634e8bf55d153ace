#pragma once
// The byte side of a JSON-RPC connection, as an interface (clangd's Transport.h): whole lines
// out through send(), whole lines in through the handlers given to start(). The concrete stdio
// transport is private to acp/stdio_transport.cpp; make_stdio_transport builds one.
#include <boost/asio/any_io_executor.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace acp {

class Transport {
 public:
  struct Handlers {
    std::function<void(std::string&&)> on_line;
    std::function<void(std::size_t)> on_oversized_line;
    std::function<void()> on_eof;  // the input closed or became unreadable
  };

  virtual ~Transport() = default;
  // Queues one message; a newline is appended. Safe from any thread.
  virtual void send(std::string line) = 0;
  // Starts reading: the handlers run on the transport's executor. A transport fed by hand (tests,
  // the fuzzer: they call Connection::handle_line themselves) needs neither start nor stop.
  virtual void start(Handlers) {}
  // Waits until every queued message was written (or writing failed), then stops writing.
  virtual void flush_and_stop() {}
};

// Reads `in_fd` on a blocking reader thread (pipes, files and ttys alike, which epoll cannot all
// watch) and posts whole lines to `executor`; a writer thread drains the queue of outgoing lines
// to `out_fd` in batches. In the server, nothing else writes to stdout.
std::unique_ptr<Transport> make_stdio_transport(boost::asio::any_io_executor executor, int in_fd, int out_fd);

}  // namespace acp
