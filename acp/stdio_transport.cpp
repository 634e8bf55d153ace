// The stdio transport: a blocking reader thread on the input and a batching writer thread.
#include <boost/asio/post.hpp>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <spdlog/spdlog.h>
#include <thread>
#include <unistd.h>

#include "acp/line_framer.hpp"
#include "acp/transport.hpp"

namespace acp {

namespace {

class StdioTransport : public Transport {
 public:
  StdioTransport(boost::asio::any_io_executor executor, int in_fd, int out_fd);
  ~StdioTransport() override;

  void start(Handlers handlers) override;
  void send(std::string line) override;
  void flush_and_stop() override;

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

}  // namespace

StdioTransport::StdioTransport(boost::asio::any_io_executor executor, int in_fd, int out_fd)
    : executor_(std::move(executor)), in_fd_(in_fd), out_fd_(out_fd) {}

StdioTransport::~StdioTransport() {
  flush_and_stop();
  // The reader may be blocked in read() on a stdin nobody closes; it holds no resources that
  // outlive the process, so it is detached rather than joined.
  if (reader_.joinable()) reader_.detach();
}

void StdioTransport::start(Handlers handlers) {
  handlers_ = std::move(handlers);
  writer_ = std::thread([this] { writer_loop(); });
  reader_ = std::thread([this] { reader_loop(); });
}

void StdioTransport::reader_loop() {
  struct PostingSink : LineFramer::Sink {
    StdioTransport* self;
    void on_line(std::string&& line) override {
      boost::asio::post(self->executor_, [self = self, l = std::move(line)]() mutable {
        self->handlers_.on_line(std::move(l));
      });
    }
    void on_oversized_line(std::size_t n) override {
      boost::asio::post(self->executor_, [self = self, n] { self->handlers_.on_oversized_line(n); });
    }
  } sink;
  sink.self = this;
  LineFramer framer(sink);
  std::string buf(1 << 16, '\0');
  for (;;) {
    ssize_t n = ::read(in_fd_, buf.data(), buf.size());
    if (n > 0) {
      framer.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  framer.finish();
  boost::asio::post(executor_, [this] { handlers_.on_eof(); });
}

void StdioTransport::send(std::string line) {
  line.push_back('\n');
  {
    std::lock_guard lock(mu_);
    if (stopping_ || write_failed_) return;
    queue_.push_back(std::move(line));
  }
  cv_.notify_one();
}

void StdioTransport::writer_loop() {
  std::string batch;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      // Coalesce everything queued into one write: streaming chunks arrive in bursts.
      batch.clear();
      while (!queue_.empty()) {
        if (batch.empty()) batch = std::move(queue_.front());
        else batch += queue_.front();
        queue_.pop_front();
      }
    }
    std::size_t off = 0;
    while (off < batch.size()) {
      ssize_t n = ::write(out_fd_, batch.data() + off, batch.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        spdlog::warn("stdout write failed: the client is gone");
        std::lock_guard lock(mu_);
        write_failed_ = true;
        queue_.clear();
        break;
      }
      off += static_cast<std::size_t>(n);
    }
  }
}

void StdioTransport::flush_and_stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

std::unique_ptr<Transport> make_stdio_transport(boost::asio::any_io_executor executor, int in_fd, int out_fd) {
  return std::make_unique<StdioTransport>(std::move(executor), in_fd, out_fd);
}

}  // namespace acp
