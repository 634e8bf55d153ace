// `local`: the machine openvaala runs on; its working directory is the session's cwd. Tools
// prefer the editor's fs/* and terminal/* here (unsaved buffers, a visible terminal); this is
// what they use when the editor does not offer them.
#include <sys/stat.h>

#include "runtime/executors/executors.hpp"
#include "runtime/executors/run_async.hpp"
#include "support/file_io.hpp"
#include "support/resolved_file_write.hpp"

namespace runtime::executors {

namespace {

class LocalExecutor : public Executor {
 public:
  LocalExecutor(Deps deps, fs::path cwd) : deps_(std::move(deps)), cwd_(std::move(cwd)) {
    info_ = {config::kLocalExecutor, "local", "", true, false, cwd_.string()};
  }
  const ExecutorInfo& info() const override { return info_; }

  boost::asio::awaitable<std::string> working_directory(support::CancelSource*) override { co_return cwd_.string(); }

  boost::asio::awaitable<std::string> read_file(const std::string& path, support::CancelSource* cancel) override {
    auto p = abs(path);
    try {
      co_return co_await detail::read_local_file(deps_, p, cancel);
    } catch (const support::FileReadError& e) {
      throw ExecutorError("Cannot read " + p.string() + ": " + e.what());
    }
  }

  boost::asio::awaitable<support::WindowRead> read_lines(const std::string& path, support::LineWindow window,
                                                         support::CancelSource* cancel) override {
    auto p = abs(path);
    try {
      co_return co_await detail::read_local_lines(deps_, p, window, cancel);
    } catch (const support::FileReadError& e) {
      throw ExecutorError("Cannot read " + p.string() + ": " + e.what());
    }
  }

  boost::asio::awaitable<void> write_file(const std::string& path, const std::string& content,
                                          support::CancelSource*) override {
    auto p = abs(path);
    auto job = [p, &content]() -> std::string {
      try {
        struct stat st {};
        mode_t mode = ::stat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : default_mode();
        // Tools hand over the path containment judged, resolved: a folder along it swapped for a
        // symlink since then fails the write rather than leading it outside (DESIGN §11).
        support::write_resolved_file_atomically(p, content, mode);
        return {};
      } catch (const std::exception& e) {
        return e.what();
      }
    };
    auto error = co_await support::run_blocking(detail::file_pool(deps_), std::move(job));
    if (!error.empty()) throw ExecutorError(error);
  }

  boost::asio::awaitable<void> remove_file(const std::string& path, support::CancelSource*) override {
    std::error_code ec;
    auto p = abs(path);
    fs::remove(p, ec);
    if (ec) throw ExecutorError("cannot remove " + p.string() + ": " + ec.message());
    co_return;
  }

  boost::asio::awaitable<FileInfo> stat(const std::string& path, support::CancelSource*) override {
    co_return co_await detail::stat_local(deps_, abs(path));
  }

  boost::asio::awaitable<RunResult> run(RunRequest request, support::CancelSource* cancel) override {
    bridge::process::ProcessSpec spec;
    spec.argv = std::move(request.wrapper);
    spec.argv.insert(spec.argv.end(), {"bash", "-c", request.command});
    spec.cwd = cwd_.string();
    spec.timeout = request.timeout;
    spec.max_output_bytes = request.max_output_bytes;
    spec.merge_stderr = true;
    auto tail = std::make_shared<detail::OutputTail>(request.max_output_bytes);
    auto on_output = [tail, user = std::move(request.on_output)](std::string_view chunk) {
      tail->add(chunk);
      if (user) user(chunk);
    };
    auto result = co_await detail::run_on_pool(deps_, std::move(spec), std::move(on_output), cancel);
    if (!result.started) throw ExecutorError("could not run bash: " + result.spawn_error);
    co_return RunResult{result.exit_code, result.term_signal, result.timed_out, std::move(tail->text), tail->truncated};
  }

 private:
  fs::path abs(const std::string& path) const {
    fs::path p(path);
    return (p.is_absolute() ? p : cwd_ / p).lexically_normal();
  }
  // A new file's mode (umask() cannot be read without setting it, racing other threads).
  static mode_t default_mode() { return 0644; }

  Deps deps_;
  fs::path cwd_;
  ExecutorInfo info_;
};

}  // namespace

std::shared_ptr<Executor> make_local_executor(Deps deps, fs::path cwd) {
  return std::make_shared<LocalExecutor>(std::move(deps), std::move(cwd));
}

}  // namespace runtime::executors
