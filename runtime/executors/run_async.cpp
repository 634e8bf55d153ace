#include "runtime/executors/run_async.hpp"

namespace runtime::executors::detail {

boost::asio::awaitable<bridge::process::ProcessResult> run_on_pool(const Deps& deps, bridge::process::ProcessSpec spec,
                                                                   std::function<void(std::string_view)> on_output,
                                                                   support::CancelSource* cancel) {
  auto flag = std::make_shared<std::atomic<bool>>(false);
  support::CancelSource::Registration reg;
  if (cancel) reg = cancel->on_cancel([flag] { flag->store(true); });
  // Chunks go to the io executor; `alive` drops those that arrive after the caller resumed.
  auto alive = std::make_shared<bool>(true);
  if (on_output) {
    auto cb = std::make_shared<std::function<void(std::string_view)>>(std::move(on_output));
    spec.on_stdout = [io = deps.io, cb, alive](std::string_view chunk) {
      boost::asio::post(io, [cb, alive, s = std::string(chunk)] {
        if (*alive) (*cb)(s);
      });
    };
  }
  auto job = [spec = std::move(spec), flag] { return bridge::process::run_process(spec, flag.get()); };
  auto result = co_await support::run_blocking(*deps.pool, std::move(job));
  *alive = false;
  co_return result;
}

boost::asio::thread_pool& file_pool(const Deps& deps) {
  return deps.file_pool ? deps.file_pool->get() : *deps.pool;
}

boost::asio::awaitable<FileInfo> stat_local(const Deps& deps, fs::path path) {
  auto job = [p = std::move(path)] {
    std::error_code ec;
    auto st = fs::status(p, ec);
    FileInfo fi;
    fi.exists = !ec && fs::exists(st);
    fi.is_directory = fi.exists && fs::is_directory(st);
    if (fi.exists && !fi.is_directory) fi.size = fs::file_size(p, ec);
    return fi;
  };
  co_return co_await support::run_blocking(file_pool(deps), std::move(job));
}

boost::asio::awaitable<support::WindowRead> read_local_lines(const Deps& deps, fs::path path, support::LineWindow window,
                                                             support::CancelSource* cancel) {
  auto job = [path = std::move(path), window](const std::atomic<bool>& stop) {
    return support::read_file_window(path, window, &stop);
  };
  auto read = co_await support::run_blocking_cancellable(file_pool(deps), cancel, std::move(job));
  if (!read) {
    support::WindowRead stopped;
    stopped.stopped = true;
    co_return stopped;
  }
  co_return std::move(*read);
}

boost::asio::awaitable<std::string> read_local_file(const Deps& deps, fs::path path, support::CancelSource* cancel) {
  auto read = co_await read_local_lines(deps, std::move(path), {1, support::LineWindow{}.max_lines, kMaxReadFileBytes}, cancel);
  if (read.stopped) throw support::FileReadError("cancelled");
  if (read.cut) throw support::FileReadError("it is larger than " + std::to_string(kMaxReadFileBytes >> 20) + " MiB");
  co_return std::move(read.text);
}

void OutputTail::add(std::string_view chunk) {
  text.append(chunk);
  if (text.size() > limit) {
    text.erase(0, text.size() - limit);
    truncated = true;
  }
}

}  // namespace runtime::executors::detail
