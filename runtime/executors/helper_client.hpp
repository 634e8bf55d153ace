#pragma once
// Our side of an executor helper (helper_protocol.hpp): the channel's local process (`ssh …`,
// `podman exec -i …`) whose far end is `openvaala executor-helper`, with requests multiplexed
// over its stdin and stdout. A reader thread hands replies to the waiting coroutines on `io`, a
// writer thread sends the requests, so a large write never holds the io thread.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/cancellation.hpp"

namespace runtime::executors {

class HelperClient {
 public:
  struct Reply {
    bool ok = false;      // else `payload` is the helper's message (e.g. "No such file or directory")
    std::string payload;
  };
  struct Exit {
    std::optional<int> code;
    std::optional<int> signal;
    bool timed_out = false;
    bool cancelled = false;
  };
  enum class Outcome { Answered, Cancelled, TimedOut, Lost };

  // Blocking: starts `argv` and waits up to `hello_timeout` for the helper's hello. Null when it
  // did not come; `why_not` then says what the far side printed (or that it was silent).
  static std::shared_ptr<HelperClient> start(boost::asio::any_io_executor io, const std::vector<std::string>& argv,
                                             std::chrono::milliseconds hello_timeout, std::string& why_not);
  ~HelperClient();
  HelperClient(const HelperClient&) = delete;
  HelperClient& operator=(const HelperClient&) = delete;

  // One request and its reply. `outcome` other than Answered leaves `Reply` empty.
  boost::asio::awaitable<Reply> call(char kind, std::string payload, std::chrono::milliseconds timeout,
                                     support::CancelSource* cancel, Outcome& outcome);
  // `bash -c command` there; output chunks go to `on_output` on `io` (never after this returns).
  // A cancel or the timeout kills its process group there and waits (briefly) for the exit.
  boost::asio::awaitable<Exit> spawn(std::string command, std::function<void(std::string_view)> on_output,
                                     std::chrono::milliseconds timeout, support::CancelSource* cancel, Outcome& outcome);

  // False once the channel ended (the helper exited, the connection dropped).
  bool alive() const;
  // Why it ended: the last line the channel's process wrote on stderr, if any.
  std::string why_lost() const;
  // Blocking, bounded: closes the helper's stdin (it ends its process groups and exits), then
  // kills the local process if it is still there.
  void close();

  struct State;

 private:
  explicit HelperClient(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace runtime::executors
