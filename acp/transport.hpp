#pragma once
// The byte side of a JSON-RPC connection, as an interface (clangd's Transport.h): whole lines
// out through send(), whole lines in through the handlers given to start(). The concrete stdio
// transport is private to acp/stdio_transport.cpp; make_stdio_transport builds one.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "acp/message_reader.hpp"
#include "support/cancellation.hpp"

namespace acp {

class Transport {
 public:
  struct Handlers {
    std::function<void(IncomingMessage&&)> on_message;
    // The peer is gone: the input closed or became unreadable, or the output broke. Runs once.
    std::function<void()> on_disconnect;
  };

  virtual ~Transport() = default;
  // Queues one message; a newline is appended. Safe from any thread.
  virtual void send(std::string line) = 0;
  // Resumes once the peer has read most of what was queued (at once while it keeps up). Bulk
  // producers (the model's streamed answer) wait here before producing more, so they go no
  // faster than the peer reads and the queue stays bounded. On the transport's executor only;
  // `cancel` (optional) ends the wait early.
  virtual boost::asio::awaitable<void> wait_until_writable(support::CancelSource* /*cancel*/) { co_return; }
  // Between hold_output() and release_output() (they nest), lines are left to the writer, which
  // writes them coalesced: a burst (a session/load replay) then costs a write per batch, where
  // sending each line at once, as send() does for a lone reply, would cost a system call or two
  // per line. Safe from any thread.
  virtual void hold_output() {}
  virtual void release_output() {}
  // Starts reading: the handlers run on the transport's executor. A transport fed by hand (tests,
  // the fuzzer: they call Connection::handle_line themselves) needs neither start nor stop.
  virtual void start(Handlers) {}
  // Waits until every queued message was written (or writing failed, or a few seconds passed: a
  // peer that stopped reading must not keep us from exiting), then stops writing.
  virtual void flush_and_stop() {}
};

// Reads `in_fd` on a blocking reader thread (pipes, files and ttys alike, which epoll cannot all
// watch), parses each line there (MessageReader) and posts the messages to `executor`; a writer
// thread drains the queue of outgoing lines to `out_fd` in batches. A write error or a pipe
// whose reader has gone (noticed within a second even when idle) is a disconnect, as is the end
// of the input. In the server, nothing else writes to stdout.
std::unique_ptr<Transport> make_stdio_transport(boost::asio::any_io_executor executor, int in_fd, int out_fd);

}  // namespace acp
