#pragma once
// The byte side of the connection: a blocking reader thread on stdin (works for pipes, files and
// ttys, which epoll cannot all watch) that posts whole lines to the io_context, and a writer
// thread that drains a queue of outgoing lines to stdout in batches. Nothing else in the
// program writes to stdout.
#include <boost/asio/any_io_executor.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace acp {

class Transport {
 public:
  virtual ~Transport() = default;
  // Queues one message; a newline is appended. Safe from any thread.
  virtual void send(std::string line) = 0;
};

class StdioTransport : public Transport {
 public:
  struct Handlers {
    std::function<void(std::string&&)> on_line;
    std::function<void(std::size_t)> on_oversized_line;
    std::function<void()> on_eof;  // stdin closed or unreadable
  };

  StdioTransport(boost::asio::any_io_executor executor, int in_fd, int out_fd);
  ~StdioTransport() override;

  void start(Handlers handlers);
  void send(std::string line) override;
  // Waits until every queued message was written (or writing failed), then stops the writer.
  void flush_and_stop();

 private:
  void reader_loop();
  void writer_loop();

  boost::asio::any_io_executor executor_;
  int in_fd_;
  int out_fd_;
  Handlers handlers_;
  std::thread reader_;
  std::thread writer_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  bool stopping_ = false;
  bool write_failed_ = false;
};

}  // namespace acp
