// `virtual`: a local folder seen as `/`, files only (DESIGN §10); the built-in `openvaala`
// executor is one too, read-only, its /skills being the built-in skills.
#include "runtime/executors/executors.hpp"
#include "runtime/protocol/executor_paths.hpp"
#include "runtime/executors/run_async.hpp"
#include "support/file_io.hpp"

namespace runtime::executors {

namespace {

class VirtualExecutor : public Executor, public ExecutorPaths {
 public:
  VirtualExecutor(Deps deps, std::string id, std::string type, fs::path root, std::string prefix, bool read_only)
      : deps_(std::move(deps)), root_(std::move(root)), prefix_(std::move(prefix)) {
    info_ = {std::move(id), std::move(type), root_.string(), false, read_only, prefix_.empty() ? "/" : prefix_};
  }
  const ExecutorInfo& info() const override { return info_; }

  boost::asio::awaitable<std::string> working_directory(support::CancelSource*) override {
    co_return info_.workdir;
  }

  boost::asio::awaitable<std::string> read_file(const std::string& path, support::CancelSource* cancel) override {
    try {
      co_return co_await detail::read_local_file(deps_, local_path(path), cancel);
    } catch (const support::FileReadError& e) {
      throw error("cannot read " + path + ": " + e.what());
    }
  }

  boost::asio::awaitable<support::WindowRead> read_lines(const std::string& path, support::LineWindow window,
                                                         support::CancelSource* cancel) override {
    try {
      co_return co_await detail::read_local_lines(deps_, local_path(path), window, cancel);
    } catch (const support::FileReadError& e) {
      throw error("cannot read " + path + ": " + e.what());
    }
  }

  boost::asio::awaitable<void> write_file(const std::string& path, const std::string& content,
                                          support::CancelSource*) override {
    refuse_writes(path);
    auto p = local_path(path);
    auto job = [p, &content]() -> std::string {
      try {
        std::error_code ec;
        fs::create_directories(p.parent_path(), ec);
        support::write_file_atomically(p, content, 0644);
        return {};
      } catch (const std::exception& e) {
        return e.what();
      }
    };
    if (auto e = co_await support::run_blocking(detail::file_pool(deps_), std::move(job)); !e.empty()) throw error(e);
  }

  boost::asio::awaitable<void> remove_file(const std::string& path, support::CancelSource*) override {
    refuse_writes(path);
    std::error_code ec;
    fs::remove(local_path(path), ec);
    if (ec) throw error("cannot remove " + path + ": " + ec.message());
    co_return;
  }

  boost::asio::awaitable<FileInfo> stat(const std::string& path, support::CancelSource*) override {
    co_return co_await detail::stat_local(deps_, local_path(path));
  }

  std::optional<fs::path> local_file(const std::string& path) const override { return local_path(path); }
  boost::asio::awaitable<RealPaths> real_paths(const std::vector<std::string>&, support::CancelSource*) override {
    throw error("its paths are local files (local_file)");
    co_return RealPaths{};
  }

  boost::asio::awaitable<RunResult> run(RunRequest, support::CancelSource*) override {
    throw error("it has files only and cannot run commands (bash, hooks and MCP servers need a local or ssh executor)");
    co_return RunResult{};
  }

 private:
  ExecutorError error(const std::string& what) const {
    return ExecutorError("executor '" + info_.id + "' (" + info_.type + "): " + what);
  }
  void refuse_writes(const std::string& path) const {
    if (info_.read_only) throw error("it is read-only; cannot write " + path);
  }
  // The local file behind `path`; never outside the root, `..` and symlinks included.
  fs::path local_path(const std::string& path) const {
    fs::path p(path);
    fs::path in = p.is_absolute() ? p : fs::path(prefix_.empty() ? "/" : prefix_) / p;
    in = in.lexically_normal();
    std::string s = in.string();
    if (!prefix_.empty()) {
      if (s != prefix_ && s.rfind(prefix_ + "/", 0) != 0) throw error(path + " does not exist (only " + prefix_ + " does)");
      s = s.substr(prefix_.size());
    }
    fs::path local = (root_ / fs::path(s).relative_path()).lexically_normal();
    std::error_code ec;
    auto real = fs::weakly_canonical(local, ec);
    auto real_root = fs::weakly_canonical(root_, ec);
    auto rel = real.lexically_relative(real_root);
    if (ec || rel.empty() || *rel.begin() == "..") throw error(path + " lies outside the executor's root");
    return local;
  }

  Deps deps_;
  fs::path root_;
  std::string prefix_;
  ExecutorInfo info_;
};

}  // namespace

std::shared_ptr<Executor> make_virtual_executor(Deps deps, std::string id, std::string type, fs::path root,
                                                std::string prefix, bool read_only) {
  return std::make_shared<VirtualExecutor>(std::move(deps), std::move(id), std::move(type), std::move(root),
                                           std::move(prefix), read_only);
}

}  // namespace runtime::executors
