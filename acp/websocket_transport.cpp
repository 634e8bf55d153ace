// One ACP connection over a WebSocket. Everything touching the socket runs on its executor (the
// io thread): send() may come from any thread, so it queues the message under a lock and posts
// the writer's start; the writer writes one frame at a time while the reader reads.
//
// Flow control as on stdio: past kThrottleBytes queued, bulk producers wait in
// wait_until_writable() until the writer has brought the queue down to kResumeBytes.
#include "acp/websocket_transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <spdlog/spdlog.h>

#include <deque>
#include <mutex>

#include "acp/message_reader.hpp"

namespace acp {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;

namespace {

constexpr std::size_t kThrottleBytes = 1u << 20;
constexpr std::size_t kResumeBytes = 256u << 10;
// Past this a peer that stopped reading is dropped: the server's memory stays bounded.
constexpr std::size_t kHardLimitBytes = 64u << 20;

template <class Next>
class WebSocketTransport : public Transport {
 public:
  explicit WebSocketTransport(WebSocketStream<Next> ws)
      : ws_(std::move(ws)), executor_(ws_.get_executor()), drained_(executor_, asio::steady_timer::time_point::max()) {
    ws_.text(true);
    ws_.read_message_max(kMaxMessageBytes);
  }

  void start(Handlers handlers) override {
    handlers_ = std::move(handlers);
    asio::co_spawn(executor_, read_loop(), asio::detached);
  }

  void send(std::string line) override {
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
      if (queued_bytes_ + line.size() > kHardLimitBytes) {
        spdlog::warn("WebSocket client stopped reading ({} bytes queued): dropping it", queued_bytes_);
        asio::post(executor_, [this] { fail(); });
        return;
      }
      queued_bytes_ += line.size();
      queue_.push_back(std::move(line));
      if (writing_) return;
      writing_ = true;
    }
    asio::post(executor_, [this] { asio::co_spawn(executor_, write_loop(), asio::detached); });
  }

  asio::awaitable<void> wait_until_writable(support::CancelSource* cancel) override {
    support::CancelSource::Registration on_cancel;
    if (cancel) on_cancel = cancel->on_cancel([this] { drained_.cancel(); });
    for (bool throttled = false; !(cancel && cancel->cancelled());) {
      {
        std::lock_guard lock(mu_);
        if (closed_ || queued_bytes_ <= (throttled ? kResumeBytes : kThrottleBytes)) co_return;
      }
      throttled = true;
      co_await drained_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
  }

  void flush_and_stop() override {
    std::lock_guard lock(mu_);
    closed_ = true;
  }

 private:
  asio::awaitable<void> read_loop() {
    beast::flat_buffer buffer;
    for (;;) {
      auto [ec, n] = co_await ws_.async_read(buffer, asio::as_tuple(asio::use_awaitable));
      if (ec) {
        if (ec == websocket::error::message_too_big)
          spdlog::warn("WebSocket client sent a message over {} bytes: closing the connection", kMaxMessageBytes);
        break;
      }
      if (!ws_.got_text()) {
        spdlog::debug("ignoring a binary WebSocket frame of {} bytes", n);
      } else {
        const std::string text = beast::buffers_to_string(buffer.data());
        buffer.consume(buffer.size());
        handlers_.on_message(MessageReader::parse_line(text));
        continue;
      }
      buffer.consume(buffer.size());
    }
    fail();
  }

  asio::awaitable<void> write_loop() {
    for (;;) {
      std::string message;
      {
        std::lock_guard lock(mu_);
        if (queue_.empty() || closed_) {
          writing_ = false;
          co_return;
        }
        message = std::move(queue_.front());
        queue_.pop_front();
      }
      auto [ec, n] = co_await ws_.async_write(asio::buffer(message), asio::as_tuple(asio::use_awaitable));
      {
        std::lock_guard lock(mu_);
        queued_bytes_ -= message.size();
      }
      drained_.cancel();  // producers re-check the queue
      if (ec) {
        {
          std::lock_guard lock(mu_);
          writing_ = false;
        }
        fail();
        co_return;
      }
    }
  }

  // The peer is gone (or misbehaved): stop writing, close the socket, tell the connection once.
  void fail() {
    {
      std::lock_guard lock(mu_);
      if (disconnected_) return;
      disconnected_ = true;
      closed_ = true;
      queue_.clear();
      queued_bytes_ = 0;
    }
    drained_.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    if (handlers_.on_disconnect) handlers_.on_disconnect();
  }

  WebSocketStream<Next> ws_;
  asio::any_io_executor executor_;
  asio::steady_timer drained_;
  Handlers handlers_;
  std::mutex mu_;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool closed_ = false;
  bool disconnected_ = false;
};

}  // namespace

std::unique_ptr<Transport> make_websocket_transport(WebSocketStream<PlainStream> ws) {
  return std::make_unique<WebSocketTransport<PlainStream>>(std::move(ws));
}

std::unique_ptr<Transport> make_websocket_transport(WebSocketStream<TlsStream> ws) {
  return std::make_unique<WebSocketTransport<TlsStream>>(std::move(ws));
}

}  // namespace acp
