// The stdio transport: the input read by the io thread itself when it can wait for it (a pipe or
// a socket: one wake-up per request instead of a reader thread's hand-off), else by a blocking
// reader thread (a file, a tty); a batching writer thread for the output.
// A line sent while nothing is queued is written by the sender itself when it certainly fits
// (write_now): a short reply then costs no hand-off to the writer, whose wake-up was most of a
// trivial request's round trip; bursts still go through the writer, which coalesces them.
//
// Flow control: the bytes queued for the output are counted. Past kThrottleBytes a bulk producer
// waiting in wait_until_writable() is held until the writer has brought the queue down to
// kResumeBytes. Producers that cannot wait (replies, single updates) only block, as a last
// resort, past kHardLimitBytes: the server's memory stays bounded whatever the peer does.
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <fcntl.h>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <algorithm>
#include <climits>
#include <thread>
#include <vector>
#include <unistd.h>

#include "acp/message_reader.hpp"
#include "acp/transport.hpp"
#include "support/one_shot_event.hpp"

namespace acp {

namespace asio = boost::asio;

namespace {

// 1 MiB is what the output pipe is grown to hold, so the writer always has a full write ready, and
// it bounds what a bulk producer (a model stream, a session/load replay) keeps in memory: the
// queue and the batch being written (4 MiB made a 20,000-message replay peak ~6 MiB higher).
constexpr std::size_t kThrottleBytes = 1u << 20;
constexpr std::size_t kResumeBytes = 256u << 10;
constexpr std::size_t kHardLimitBytes = 64u << 20;
// In a burst (hold_output), what is queued before an idle writer is woken for it.
constexpr std::size_t kBurstBatchBytes = 64u << 10;
// How often an idle writer checks that the output still has a reader.
constexpr auto kOutputCheckInterval = std::chrono::milliseconds(500);
constexpr auto kFlushTimeout = std::chrono::seconds(3);

// True when `fd` reports an error or hang-up (a pipe whose read end is closed, a socket shut
// down); a regular file or a tty reports neither.
bool output_broken(int fd) {
  pollfd p{fd, 0, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP | POLLNVAL));
}

class StdioTransport : public Transport {
 public:
  StdioTransport(asio::any_io_executor executor, int in_fd, int out_fd);
  ~StdioTransport() override;

  void start(Handlers handlers) override;
  void send(std::string line) override;
  void hold_output() override;
  void release_output() override;
  asio::awaitable<void> wait_until_writable(support::CancelSource* cancel) override;
  void flush_and_stop() override;

 private:
  void reader_loop();
  void read_input_async();
  void input_ended();
  void writer_loop();
  bool write_all(const std::string& batch);
  bool write_all(const std::deque<std::string>& lines);
  std::ptrdiff_t write_now(const std::string& line);
  void output_failed(const char* why);
  void report_disconnect();
  void wake_producers(std::unique_lock<std::mutex>& lock);

  asio::any_io_executor executor_;
  int in_fd_;
  int out_fd_;
  // What write_now may do with the output: send without waiting on a socket, write into an
  // empty pipe what fits its capacity; anything else (a file, a tty) goes through the writer.
  enum class Output { Pipe, Socket, Other } output_kind_ = Output::Other;
  std::size_t pipe_capacity_ = 0;
  // The destructor writes a byte here to wake a reader waiting on an input nobody closes, so it
  // can join the reader instead of leaving a thread that touches a freed transport.
  int stop_reader_pipe_[2] = {-1, -1};
  Handlers handlers_;
  // The io thread's reading of a pipe or socket input. Its handlers hold the state, not the
  // transport: one that runs after the transport is gone sees `stopped` and does nothing.
  struct AsyncInput : MessageReader::Sink {
    explicit AsyncInput(asio::any_io_executor ex, int fd) : descriptor(ex, ::dup(fd)), reader(*this) {}
    void on_message(IncomingMessage&& message) override {
      if (!stopped) self->handlers_.on_message(std::move(message));
    }
    StdioTransport* self = nullptr;
    bool stopped = false;
    asio::posix::stream_descriptor descriptor;  // a duplicate: closing it leaves our stdin open
    MessageReader reader;
    std::string buffer = std::string(1 << 16, '\0');
  };
  std::shared_ptr<AsyncInput> async_input_;
  std::thread reader_;
  std::thread writer_;
  support::OneShotEvent drained_;  // producers wait for it; set when the queue drained (executor only)

  std::mutex mu_;
  std::condition_variable work_cv_;   // the writer waits for lines
  std::condition_variable space_cv_;  // send() waits below the hard limit; flush waits for empty
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;  // in queue_ and in the batch being written
  bool producers_waiting_ = false;
  bool stopping_ = false;
  bool write_failed_ = false;
  bool input_closed_ = false;
  int holds_ = 0;  // hold_output() calls not yet released: send() leaves lines to the writer
  bool disconnect_reported_ = false;
};

}  // namespace

StdioTransport::StdioTransport(asio::any_io_executor executor, int in_fd, int out_fd)
    : executor_(std::move(executor)), in_fd_(in_fd), out_fd_(out_fd), drained_(executor_) {
  if (::pipe2(stop_reader_pipe_, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  struct stat st {};
  if (::fstat(out_fd_, &st) == 0 && S_ISSOCK(st.st_mode)) {
    output_kind_ = Output::Socket;
  } else if (S_ISFIFO(st.st_mode)) {
    // A pipe holds 64 KiB unless asked for more: a bulk send (a session/load replay) then wakes
    // the writer and the editor's reader once per 64 KiB. Ask for the writer's whole batch; a
    // system that refuses (its pipe-max-size or the user's pipe quota) keeps what it gave.
    ::fcntl(out_fd_, F_SETPIPE_SZ, static_cast<int>(kThrottleBytes));
    const int capacity = ::fcntl(out_fd_, F_GETPIPE_SZ);
    if (capacity > 0) {
      output_kind_ = Output::Pipe;
      pipe_capacity_ = static_cast<std::size_t>(capacity);
    }
  }
}

StdioTransport::~StdioTransport() {
  flush_and_stop();
  if (async_input_) {
    async_input_->stopped = true;
    boost::system::error_code ignored;
    async_input_->descriptor.close(ignored);  // the duplicate; a line written later stays unread
  }
  if (reader_.joinable()) {
    const char wake = 0;
    while (::write(stop_reader_pipe_[1], &wake, 1) < 0 && errno == EINTR) {
    }
    reader_.join();
  }
  ::close(stop_reader_pipe_[0]);
  ::close(stop_reader_pipe_[1]);
}

void StdioTransport::start(Handlers handlers) {
  handlers_ = std::move(handlers);
  writer_ = std::thread([this] { writer_loop(); });
  struct stat st {};
  const bool pollable = ::fstat(in_fd_, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
  if (pollable) {
    async_input_ = std::make_shared<AsyncInput>(executor_, in_fd_);
    async_input_->self = this;
    boost::system::error_code ec;
    async_input_->descriptor.non_blocking(true, ec);  // read_input_async reads it directly
    if (!ec) {
      asio::post(executor_, [this, state = async_input_] {
        if (!state->stopped) read_input_async();
      });
      return;
    }
    async_input_->stopped = true;
    async_input_.reset();
  }
  reader_ = std::thread([this] { reader_loop(); });
}

// Reads what the input holds, then waits for more. A read that did not fill the buffer emptied
// the pipe, so the next read waits for readiness first (asio's async_read_some would try one
// straight away and get EAGAIN: a wasted syscall for every message that arrives on its own).
void StdioTransport::read_input_async() {
  auto state = async_input_;
  for (int full_reads = 0;;) {
    const ssize_t n = ::read(state->descriptor.native_handle(), state->buffer.data(), state->buffer.size());
    if (n > 0) {
      state->reader.feed(std::string_view(state->buffer.data(), static_cast<std::size_t>(n)));
      if (state->stopped) return;  // a message's handler destroyed the transport
      if (static_cast<std::size_t>(n) < state->buffer.size()) break;
      if (++full_reads < 16) continue;  // there may be more
      // A flood (a huge line): let the io thread's other work run between megabytes.
      asio::post(executor_, [this, state] {
        if (!state->stopped) read_input_async();
      });
      return;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    state->reader.finish();  // end of input, or a read error
    input_ended();
    return;
  }
  state->descriptor.async_wait(asio::posix::descriptor_base::wait_read, [this, state](boost::system::error_code) {
    if (!state->stopped) read_input_async();  // an error shows in the read
  });
}

// End of input (EOF or a read error), from either reader.
void StdioTransport::input_ended() {
  {
    std::lock_guard lock(mu_);
    input_closed_ = true;
  }
  space_cv_.notify_all();
  report_disconnect();
}

void StdioTransport::report_disconnect() {
  {
    std::lock_guard lock(mu_);
    if (disconnect_reported_) return;
    disconnect_reported_ = true;
  }
  asio::post(executor_, [this] { handlers_.on_disconnect(); });
}

void StdioTransport::reader_loop() {
  struct PostingSink : MessageReader::Sink {
    StdioTransport* self;
    void on_message(IncomingMessage&& message) override {
      asio::post(self->executor_, [self = self, m = std::move(message)]() mutable {
        self->handlers_.on_message(std::move(m));
      });
    }
  } sink;
  sink.self = this;
  MessageReader reader(sink);
  std::string buf(1 << 16, '\0');
  for (;;) {
    // poll() works on pipes, files and ttys alike; it also hears the destructor's stop byte.
    pollfd fds[2] = {{in_fd_, POLLIN, 0}, {stop_reader_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) return;  // the transport is being destroyed: nobody to tell
    ssize_t n = ::read(in_fd_, buf.data(), buf.size());
    if (n > 0) {
      reader.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  reader.finish();
  input_ended();
}

void StdioTransport::send(std::string line) {
  line.push_back('\n');
  {
    std::unique_lock lock(mu_);
    space_cv_.wait(lock, [this] {
      return queued_bytes_ < kHardLimitBytes || stopping_ || write_failed_ || input_closed_;
    });
    if (stopping_ || write_failed_ || queued_bytes_ >= kHardLimitBytes) return;
    // Nothing queued and nothing being written (queued_bytes_ counts the writer's batch too), so
    // a line written here cannot overtake an earlier one.
    if (queued_bytes_ == 0 && holds_ == 0) {
      const std::ptrdiff_t written = write_now(line);
      if (written < 0) {
        lock.unlock();
        output_failed("write failed");
        return;
      }
      if (static_cast<std::size_t>(written) == line.size()) return;
      line.erase(0, static_cast<std::size_t>(written));
    }
    queued_bytes_ += line.size();
    queue_.push_back(std::move(line));
    // In a burst an idle writer is woken once a batch is worth a write (or at the release).
    if (holds_ > 0 && queued_bytes_ < kBurstBatchBytes) return;
  }
  work_cv_.notify_one();
}

void StdioTransport::hold_output() {
  std::lock_guard lock(mu_);
  ++holds_;
}

void StdioTransport::release_output() {
  {
    std::lock_guard lock(mu_);
    if (holds_ > 0) --holds_;
    if (holds_ > 0 || queue_.empty()) return;
  }
  work_cv_.notify_one();
}

asio::awaitable<void> StdioTransport::wait_until_writable(support::CancelSource* cancel) {
  {
    std::lock_guard lock(mu_);
    if (queued_bytes_ <= kThrottleBytes || stopping_ || write_failed_) co_return;
  }
  while (!(cancel && cancel->cancelled())) {
    {
      std::lock_guard lock(mu_);
      if (queued_bytes_ <= kResumeBytes || stopping_ || write_failed_) co_return;
      producers_waiting_ = true;
    }
    // The writer posts drained_.set() after it clears producers_waiting_; that handler runs on
    // this executor, so it cannot slip in between the check above and this wait.
    drained_.reset();
    co_await drained_.wait(cancel);
  }
}

// Called with the lock held, after the queue shrank or the output ended.
void StdioTransport::wake_producers(std::unique_lock<std::mutex>& lock) {
  const bool wake = producers_waiting_ && (queued_bytes_ <= kResumeBytes || stopping_ || write_failed_);
  if (wake) producers_waiting_ = false;
  lock.unlock();
  space_cv_.notify_all();
  if (wake) asio::post(executor_, [this] { drained_.set(); });
}

void StdioTransport::output_failed(const char* why) {
  spdlog::warn("stdout {}: the client is gone", why);
  std::unique_lock lock(mu_);
  write_failed_ = true;
  queue_.clear();
  queued_bytes_ = 0;
  wake_producers(lock);
  report_disconnect();
}

bool StdioTransport::write_all(const std::string& batch) {
  std::size_t off = 0;
  while (off < batch.size()) {
    ssize_t n = ::write(out_fd_, batch.data() + off, batch.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// The bytes of `line` written without blocking the caller (0: leave it all to the writer), or -1
// when the output failed.
std::ptrdiff_t StdioTransport::write_now(const std::string& line) {
  if (output_kind_ == Output::Socket) {
    for (;;) {
      const ssize_t n = ::send(out_fd_, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
  }
  if (output_kind_ == Output::Pipe && line.size() <= pipe_capacity_) {
    // An empty pipe has every buffer free, so a write up to its capacity completes at once (a
    // pipe that holds anything may have its buffers split and block a write that seems to fit).
    int unread = -1;
    if (::ioctl(out_fd_, FIONREAD, &unread) == 0 && unread == 0)
      return write_all(line) ? static_cast<std::ptrdiff_t>(line.size()) : -1;
  }
  return 0;
}

// The lines with one writev per IOV_MAX of them, not copied into one buffer first (a replay's
// megabytes would be copied once more, into fresh pages).
bool StdioTransport::write_all(const std::deque<std::string>& lines) {
  std::vector<iovec> iov;
  iov.reserve(std::min<std::size_t>(lines.size(), IOV_MAX));
  for (std::size_t next = 0; next < lines.size();) {
    iov.clear();
    for (; next < lines.size() && iov.size() < IOV_MAX; ++next)
      iov.push_back(iovec{const_cast<char*>(lines[next].data()), lines[next].size()});
    for (std::size_t first = 0; first < iov.size();) {
      const ssize_t n = ::writev(out_fd_, iov.data() + first, static_cast<int>(iov.size() - first));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      // Past what was written: whole lines, then into the line it stopped in.
      for (auto left = static_cast<std::size_t>(n); left > 0;) {
        const std::size_t take = std::min(left, iov[first].iov_len);
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + take;
        iov[first].iov_len -= take;
        left -= take;
        if (iov[first].iov_len == 0) ++first;
      }
      while (first < iov.size() && iov[first].iov_len == 0) ++first;
    }
  }
  return true;
}

void StdioTransport::writer_loop() {
  std::deque<std::string> batch;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      // Held lines wait for the release or a batch worth a write, also when the periodic check of
      // the output (or a spurious wake-up) wakes the writer meanwhile.
      auto nothing_to_write = [this] { return queue_.empty() || (holds_ > 0 && queued_bytes_ < kBurstBatchBytes); };
      while (!stopping_ && nothing_to_write()) {
        if (work_cv_.wait_for(lock, kOutputCheckInterval) == std::cv_status::timeout && queue_.empty() &&
            !stopping_ && !write_failed_ && output_broken(out_fd_)) {
          lock.unlock();
          output_failed("was closed");
          lock.lock();
        }
      }
      if (queue_.empty()) return;  // stopping and drained
      // Everything queued goes in one writev: streaming chunks arrive in bursts.
      batch.clear();
      batch.swap(queue_);
    }
    std::size_t bytes = 0;
    for (const auto& line : batch) bytes += line.size();
    if (!write_all(batch)) {
      output_failed("write failed");
      continue;
    }
    std::unique_lock lock(mu_);
    queued_bytes_ = queued_bytes_ >= bytes ? queued_bytes_ - bytes : 0;
    wake_producers(lock);
  }
}

void StdioTransport::flush_and_stop() {
  bool drained;
  {
    std::unique_lock lock(mu_);
    drained = space_cv_.wait_for(lock, kFlushTimeout, [this] { return queued_bytes_ == 0 || write_failed_; });
    stopping_ = true;
  }
  work_cv_.notify_all();
  space_cv_.notify_all();
  if (!writer_.joinable()) return;
  // A writer still blocked in write() to a peer that stopped reading is left behind: the
  // process exits right after this.
  if (drained) writer_.join();
  else writer_.detach();
}

std::unique_ptr<Transport> make_stdio_transport(asio::any_io_executor executor, int in_fd, int out_fd) {
  return std::make_unique<StdioTransport>(std::move(executor), in_fd, out_fd);
}

}  // namespace acp
