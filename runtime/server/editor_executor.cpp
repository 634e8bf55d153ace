#include "runtime/server/editor_executor.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include "runtime/agent/containment.hpp"

namespace runtime::server {

void EditorExecutor::refuse_process_file(const std::string& path) {
  if (containment::names_process_file(path))
    throw ExecutorError("Refused: " + path + " names a file of whichever process opens it, and the editor opens it");
}

boost::asio::awaitable<std::string> EditorExecutor::read_file(const std::string& path, support::CancelSource* cancel) {
  if (!editor_.can_read_files()) co_return co_await local_->read_file(path, cancel);
  refuse_process_file(path);
  try {
    co_return co_await editor_.read_text_file(session_id_, path, std::nullopt, std::nullopt, cancel);
  } catch (const EditorError& e) {
    throw ExecutorError("Cannot read " + path + ": " + e.what());
  }
}

// The editor reads the window (with its unsaved changes); the caller cuts what is too long.
boost::asio::awaitable<support::WindowRead> EditorExecutor::read_lines(const std::string& path, support::LineWindow window,
                                                                      support::CancelSource* cancel) {
  if (!editor_.can_read_files()) co_return co_await local_->read_lines(path, window, cancel);
  refuse_process_file(path);
  support::WindowRead read;
  try {
    read.text = co_await editor_.read_text_file(session_id_, path, window.first_line, window.max_lines, cancel);
  } catch (const EditorError& e) {
    throw ExecutorError("Cannot read " + path + ": " + e.what());
  }
  read.bytes_read = read.text.size();
  co_return read;
}

boost::asio::awaitable<void> EditorExecutor::write_file(const std::string& path, const std::string& content,
                                                       support::CancelSource* cancel) {
  if (!editor_.can_write_files()) {
    co_await local_->write_file(path, content, cancel);
    co_return;
  }
  refuse_process_file(path);
  try {
    co_await editor_.write_text_file(session_id_, path, content, cancel);
  } catch (const EditorError& e) {
    throw ExecutorError("cannot write " + path + ": " + e.what());
  }
}

boost::asio::awaitable<RunResult> EditorExecutor::run(RunRequest request, support::CancelSource* cancel) {
  if (!editor_.has_terminals()) co_return co_await local_->run(std::move(request), cancel);
  co_return co_await run_in_terminal(std::move(request), cancel);
}

namespace {

// Kill (when it still runs), read what it printed, release: each step best effort.
boost::asio::awaitable<TerminalOutput> close_terminal(EditorHost& editor, const std::string& sid,
                                                      const std::string& terminal_id, bool kill) {
  if (kill) {
    try {
      co_await editor.terminal_kill(sid, terminal_id);
    } catch (const EditorError&) {
    }
  }
  TerminalOutput out;
  try {
    out = co_await editor.terminal_output(sid, terminal_id);
  } catch (const EditorError&) {
  }
  try {
    co_await editor.terminal_release(sid, terminal_id);
  } catch (const EditorError&) {
  }
  co_return out;
}

}  // namespace

// terminal/create is not given up the moment the turn is cancelled: the editor may have started
// the command already, and only its terminal id lets us kill and release it (given up at once, a
// cancel racing the reply left the command running). An editor that does not answer is given up
// on kCreateGrace after the cancel.
boost::asio::awaitable<std::string> EditorExecutor::create_terminal(const std::string& shell, const std::vector<std::string>& argv,
                                                                    const std::string& cwd, std::int64_t output_limit,
                                                                    support::CancelSource* cancel) {
  constexpr auto kCreateGrace = std::chrono::seconds(5);
  support::CancelSource give_up;
  boost::asio::steady_timer grace(co_await boost::asio::this_coro::executor);
  support::CancelSource::Registration reg;
  if (cancel)
    reg = cancel->on_cancel([&] {
      grace.expires_after(kCreateGrace);
      grace.async_wait([&give_up](boost::system::error_code ec) {
        if (!ec) give_up.cancel();
      });
    });
  auto id = co_await editor_.terminal_create(session_id_, shell, argv, cwd, output_limit, &give_up);
  reg.reset();
  grace.cancel();
  co_return id;
}

// In the sandbox the editor runs the helper (request.wrapper), which confines itself and then runs
// bash. Waits for the exit until the turn is cancelled or the timeout fires.
boost::asio::awaitable<RunResult> EditorExecutor::run_in_terminal(RunRequest request, support::CancelSource* cancel) {
  std::vector<std::string> argv = request.wrapper;
  argv.insert(argv.end(), {"bash", "-c", request.command});
  const std::string shell = argv.front();
  argv.erase(argv.begin());
  const std::string cwd = co_await local_->working_directory(cancel);
  std::string terminal_id;
  try {
    terminal_id = co_await create_terminal(shell, argv, cwd, static_cast<std::int64_t>(request.max_output_bytes), cancel);
  } catch (const EditorError& e) {
    throw ExecutorError(std::string("The editor could not start the command: ") + e.what());
  }
  if (request.on_terminal) request.on_terminal(terminal_id);

  support::CancelSource stop_waiting;
  RunResult result;
  result.terminal_id = terminal_id;
  support::CancelSource::Registration turn_reg;
  if (cancel) turn_reg = cancel->on_cancel([&] { stop_waiting.cancel(); });
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, request.timeout);
  if (request.timeout.count() > 0)
    timer.async_wait([&](boost::system::error_code ec) {
      if (!ec) {
        result.timed_out = true;
        stop_waiting.cancel();
      }
    });
  std::optional<TerminalExit> exit;
  std::string failure;
  try {
    exit = co_await editor_.terminal_wait_for_exit(session_id_, terminal_id, &stop_waiting);
  } catch (const EditorError& e) {
    if (!stop_waiting.cancelled()) failure = e.what();
  }
  timer.cancel();
  turn_reg.reset();
  auto out = co_await close_terminal(editor_, session_id_, terminal_id, !exit);
  if (!failure.empty() && !(cancel && cancel->cancelled()))
    throw ExecutorError("The command failed in the editor's terminal: " + failure);
  if (!exit && out.exit_status) exit = out.exit_status;
  result.output = std::move(out.output);
  result.truncated = out.truncated;
  if (exit && exit->exit_code) result.exit_code = static_cast<int>(*exit->exit_code);
  if (exit && exit->signal) result.signal_name = *exit->signal;
  co_return result;
}

std::shared_ptr<Executor> local_for_tools(EditorHost& editor, const std::string& session_id,
                                          std::shared_ptr<Executor> local) {
  if (!local || !(editor.can_read_files() || editor.can_write_files() || editor.has_terminals())) return local;
  return std::make_shared<EditorExecutor>(editor, session_id, std::move(local));
}

}  // namespace runtime::server
