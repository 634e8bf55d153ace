// HelperClient (helper_client.hpp).
#include "runtime/executors/helper_client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "bridge/process/child_command.hpp"
#include "bridge/process/child_spawn.hpp"
#include "bridge/process/process_groups.hpp"
#include "runtime/executors/helper_protocol.hpp"
#include "runtime/executors/remote_shell_executor.hpp"
#include "support/one_shot_event.hpp"

namespace runtime::executors {

namespace asio = boost::asio;
using namespace helper;
using Clock = std::chrono::steady_clock;

namespace {

// A request in flight. Filled in by the reader thread, then `done` is set on io (the post is
// what makes the fields visible there).
struct Op {
  explicit Op(asio::any_io_executor io) : done(std::move(io)) {}
  support::OneShotEvent done;
  HelperClient::Reply reply;
  std::optional<HelperClient::Exit> exit;
  bool lost = false;
  std::function<void(std::string_view)> on_output;  // touched on io only
};

// Reads what `fd` has until EOF or `within` has passed.
std::string read_for(int fd, std::chrono::milliseconds within) {
  std::string out;
  const auto until = Clock::now() + within;
  char buf[4096];
  while (Clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (::poll(&p, 1, static_cast<int>(std::max<long long>(left, 0))) <= 0) break;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace

struct HelperClient::State {
  explicit State(asio::any_io_executor io) : io(std::move(io)) {}
  asio::any_io_executor io;
  pid_t pid = -1;
  int in = -1, out = -1, err = -1;
  std::thread reader, writer, err_reader;
  FrameReader frames;  // the reader thread's, after start

  mutable std::mutex mu;
  std::condition_variable wake_writer;
  std::deque<std::string> outbox;
  bool closing = false;
  bool closed = false;
  bool lost = false;
  std::map<std::uint32_t, std::shared_ptr<Op>> ops;
  std::uint32_t next_id = 1;
  std::string err_tail;

  // Queues a frame; false once the channel is gone.
  bool send(std::uint32_t id, char kind, std::string payload) {
    std::lock_guard lock(mu);
    if (lost || closing) return false;
    outbox.push_back(encode(Frame{id, kind, std::move(payload)}));
    wake_writer.notify_one();
    return true;
  }

  std::shared_ptr<Op> add(std::uint32_t& id) {
    auto op = std::make_shared<Op>(io);
    std::lock_guard lock(mu);
    if (lost || closing) return nullptr;
    id = next_id++;
    ops.emplace(id, op);
    return op;
  }
  void forget(std::uint32_t id) {
    std::lock_guard lock(mu);
    ops.erase(id);
  }

  void deliver(Frame f) {
    std::shared_ptr<Op> op;
    {
      std::lock_guard lock(mu);
      auto it = ops.find(f.id);
      if (it == ops.end()) return;  // given up (cancelled, timed out)
      op = it->second;
      if (f.kind != kOutput) ops.erase(it);
    }
    if (f.kind == kOutput) {
      asio::post(io, [op, chunk = std::move(f.payload)] {
        if (op->on_output) op->on_output(chunk);
      });
      return;
    }
    if (f.kind == kExit) {
      PayloadReader in(f.payload);
      const auto code = static_cast<std::int32_t>(in.u32());
      const auto signal = static_cast<std::int32_t>(in.u32());
      op->exit = Exit{code >= 0 ? std::optional<int>(code) : std::nullopt,
                      signal >= 0 ? std::optional<int>(signal) : std::nullopt};
    } else {
      op->reply = Reply{f.kind == kOk, std::move(f.payload)};
    }
    asio::post(io, [op] { op->done.set(); });
  }

  void read_replies() {
    char buf[65536];
    try {
      while (auto f = frames.next()) deliver(std::move(*f));
      for (;;) {
        const ssize_t n = ::read(out, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        frames.add(std::string_view(buf, static_cast<std::size_t>(n)));
        while (auto f = frames.next()) deliver(std::move(*f));
      }
    } catch (const std::exception&) {
      // Not a frame: treated as the end of the channel.
    }
    std::map<std::uint32_t, std::shared_ptr<Op>> left;
    {
      std::lock_guard lock(mu);
      lost = true;
      left.swap(ops);
      wake_writer.notify_one();
    }
    for (auto& [_, op] : left) {
      op->lost = true;
      asio::post(io, [op] { op->done.set(); });
    }
  }

  void write_requests() {
    // A helper gone: EPIPE here, not a SIGPIPE that would end the server.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    std::unique_lock lock(mu);
    for (;;) {
      wake_writer.wait(lock, [&] { return !outbox.empty() || closing || lost; });
      if (outbox.empty() || lost) break;
      std::string bytes = std::move(outbox.front());
      outbox.pop_front();
      lock.unlock();
      bool failed = false;
      for (std::size_t at = 0; at < bytes.size() && !failed;) {
        const ssize_t n = ::write(in, bytes.data() + at, bytes.size() - at);
        if (n < 0 && errno == EINTR) continue;
        failed = n <= 0;
        if (!failed) at += static_cast<std::size_t>(n);
      }
      lock.lock();
      if (failed) break;
    }
    lock.unlock();
    // The end of its stdin: the helper ends its process groups and exits.
    bridge::process::forget_group_input(pid);
    ::close(in);
  }

  void read_stderr() {
    char buf[4096];
    for (ssize_t n; (n = ::read(err, buf, sizeof buf)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      std::lock_guard lock(mu);
      err_tail.append(buf, static_cast<std::size_t>(n));
      if (err_tail.size() > 4096) err_tail.erase(0, err_tail.size() - 4096);
    }
  }

  // Waits for the local process (killing its group if it lingers) and forgets it.
  void reap(std::chrono::milliseconds grace) {
    int status = 0;
    const auto until = Clock::now() + grace;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (Clock::now() >= until) {
        ::kill(-pid, SIGKILL);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    bridge::process::child_reaped(pid);
    bridge::process::unregister_process_group(pid);
  }
};

namespace {

// Starts argv (looked up on PATH) in its own process group with three pipes; errno or 0.
int spawn_channel(const std::vector<std::string>& argv, HelperClient::State& s) {
  int p[3][2];  // stdin, stdout, stderr
  for (int i = 0; i < 3; ++i) {
    if (::pipe2(p[i], O_CLOEXEC) == 0) continue;
    const int e = errno;
    for (int j = 0; j < i; ++j) ::close(p[j][0]), ::close(p[j][1]);
    return e;
  }
  auto& in = p[0];
  auto& out = p[1];
  auto& err = p[2];
  bridge::process::ProcessSpec spec;
  spec.argv = argv;
  const bridge::process::detail::ChildCommand command(spec);
  const bridge::process::ChildSpawn spawn(in[0], out[1], err[1], nullptr);
  int rc = ENOENT;
  for (const auto& path : command.candidates()) {
    rc = spawn.spawn(s.pid, path.c_str(), command.argv(), command.envp());
    if (rc != ENOENT && rc != EACCES && rc != ENOTDIR) break;
  }
  for (int fd : {in[0], out[1], err[1]}) ::close(fd);
  s.in = in[1], s.out = out[0], s.err = err[0];
  if (rc != 0) {
    for (int fd : {s.in, s.out, s.err}) ::close(fd);
    return rc;
  }
  bridge::process::register_process_group(s.pid, s.in);
  return 0;
}

// Reads until the first frame; true when it is the helper's hello.
bool read_hello(HelperClient::State& s, std::chrono::milliseconds within) {
  const auto until = Clock::now() + within;
  char buf[4096];
  try {
    while (Clock::now() < until) {
      pollfd p{s.out, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      if (::poll(&p, 1, static_cast<int>(std::max<long long>(left, 0))) <= 0) return false;
      const ssize_t n = ::read(s.out, buf, sizeof buf);
      if (n <= 0) return false;
      s.frames.add(std::string_view(buf, static_cast<std::size_t>(n)));
      if (auto f = s.frames.next()) return f->id == 0 && f->kind == kHello && f->payload == kHelloText;
    }
  } catch (const std::exception&) {
    // Not a frame: something else answered there.
  }
  return false;
}

}  // namespace

std::shared_ptr<HelperClient> HelperClient::start(asio::any_io_executor io, const std::vector<std::string>& argv,
                                                  std::chrono::milliseconds hello_timeout, std::string& why_not) {
  auto s = std::make_shared<State>(std::move(io));
  if (const int rc = spawn_channel(argv, *s); rc != 0) {
    why_not = "cannot start " + argv.at(0) + ": " + std::strerror(rc);
    return nullptr;
  }
  if (!read_hello(*s, hello_timeout)) {
    bridge::process::forget_group_input(s->pid);
    ::close(s->in);
    std::string said = last_line(read_for(s->err, std::chrono::milliseconds(500)));
    why_not = said.empty() ? "it did not answer" : said;
    s->reap(std::chrono::milliseconds(500));
    ::close(s->out);
    ::close(s->err);
    return nullptr;
  }
  s->reader = std::thread([s] { s->read_replies(); });
  s->writer = std::thread([s] { s->write_requests(); });
  s->err_reader = std::thread([s] { s->read_stderr(); });
  return std::shared_ptr<HelperClient>(new HelperClient(std::move(s)));
}

HelperClient::~HelperClient() { close(); }

bool HelperClient::alive() const {
  std::lock_guard lock(state_->mu);
  return !state_->lost && !state_->closing;
}

std::string HelperClient::why_lost() const {
  std::lock_guard lock(state_->mu);
  return last_line(state_->err_tail);
}

void HelperClient::close() {
  auto& s = *state_;
  {
    std::lock_guard lock(s.mu);
    if (s.closed) return;
    s.closed = s.closing = true;
    s.wake_writer.notify_one();
  }
  s.writer.join();
  s.reap(std::chrono::milliseconds(2000));
  s.reader.join();
  s.err_reader.join();
  ::close(s.out);
  ::close(s.err);
}

namespace {

// Waits for `op` until it is answered, `cancel` fires or `timeout` passes.
asio::awaitable<HelperClient::Outcome> wait_for(Op& op, std::chrono::milliseconds timeout, support::CancelSource* cancel) {
  struct Stop {
    support::CancelSource source;
    bool timed_out = false;
  };
  auto stop = std::make_shared<Stop>();
  asio::steady_timer timer(op.done.executor(), timeout);
  timer.async_wait([stop](boost::system::error_code ec) {
    if (ec) return;
    stop->timed_out = true;
    stop->source.cancel();
  });
  support::CancelSource::Registration reg;
  if (cancel) reg = cancel->on_cancel([stop] { stop->source.cancel(); });
  const bool answered = co_await op.done.wait(&stop->source);
  timer.cancel();
  if (answered) co_return op.lost ? HelperClient::Outcome::Lost : HelperClient::Outcome::Answered;
  co_return stop->timed_out ? HelperClient::Outcome::TimedOut : HelperClient::Outcome::Cancelled;
}

}  // namespace

asio::awaitable<HelperClient::Reply> HelperClient::call(char kind, std::string payload, std::chrono::milliseconds timeout,
                                                        support::CancelSource* cancel, Outcome& outcome) {
  std::uint32_t id = 0;
  auto op = state_->add(id);
  if (!op || !state_->send(id, kind, std::move(payload))) {
    outcome = Outcome::Lost;
    co_return Reply{};
  }
  outcome = co_await wait_for(*op, timeout, cancel);
  if (outcome != Outcome::Answered) {
    state_->forget(id);
    co_return Reply{};
  }
  co_return std::move(op->reply);
}

asio::awaitable<HelperClient::Exit> HelperClient::spawn(std::string command, std::function<void(std::string_view)> on_output,
                                                        std::chrono::milliseconds timeout, support::CancelSource* cancel,
                                                        Outcome& outcome) {
  std::uint32_t id = 0;
  auto op = state_->add(id);
  if (op) op->on_output = std::move(on_output);
  std::string payload;
  put_string(payload, command);
  if (!op || !state_->send(id, kSpawn, std::move(payload))) {
    outcome = Outcome::Lost;
    co_return Exit{};
  }
  outcome = co_await wait_for(*op, timeout, cancel);
  Exit exit;
  if (outcome == Outcome::Cancelled || outcome == Outcome::TimedOut) {
    // Its process group there gets SIGTERM, then SIGKILL a second later: wait for that exit.
    state_->send(id, kKill, {});
    if (co_await wait_for(*op, std::chrono::milliseconds(3000), nullptr) == Outcome::Answered && op->exit) exit = *op->exit;
    exit.cancelled = outcome == Outcome::Cancelled;
    exit.timed_out = outcome == Outcome::TimedOut;
    state_->forget(id);
    outcome = Outcome::Answered;
  } else if (outcome == Outcome::Answered && op->exit) {
    exit = *op->exit;
  } else if (outcome == Outcome::Answered) {
    op->on_output = nullptr;
    throw std::runtime_error(op->reply.payload);
  }
  op->on_output = nullptr;
  co_return exit;
}

}  // namespace runtime::executors
