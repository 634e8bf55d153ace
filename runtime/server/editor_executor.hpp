#pragma once
// The editor as an executor (DESIGN §10): on `local`, files are read and written through the
// editor's fs/* where it offers them (it sees unsaved buffers, and its buffers follow our
// writes) and commands run in its terminal/* (the user watches them live); what the editor does
// not offer (stat, remove, or all of it) is done by the local executor. Tools see one Executor
// and never choose between the two.
#include <memory>
#include <string>

#include "runtime/protocol/editor_host.hpp"
#include "runtime/protocol/executor.hpp"

namespace runtime::server {

class EditorExecutor : public Executor {
 public:
  EditorExecutor(EditorHost& editor, std::string session_id, std::shared_ptr<Executor> local)
      : editor_(editor), session_id_(std::move(session_id)), local_(std::move(local)) {}

  const ExecutorInfo& info() const override { return local_->info(); }
  boost::asio::awaitable<std::string> working_directory(support::CancelSource* cancel) override {
    return local_->working_directory(cancel);
  }
  boost::asio::awaitable<std::string> read_file(const std::string& path, support::CancelSource* cancel) override;
  boost::asio::awaitable<support::WindowRead> read_lines(const std::string& path, support::LineWindow window,
                                                         support::CancelSource* cancel) override;
  boost::asio::awaitable<void> write_file(const std::string& path, const std::string& content,
                                          support::CancelSource* cancel) override;
  boost::asio::awaitable<void> remove_file(const std::string& path, support::CancelSource* cancel) override {
    return local_->remove_file(path, cancel);
  }
  boost::asio::awaitable<FileInfo> stat(const std::string& path, support::CancelSource* cancel) override {
    return local_->stat(path, cancel);
  }
  boost::asio::awaitable<RunResult> run(RunRequest request, support::CancelSource* cancel) override;
  bool opens_elsewhere(bool writes) const override {
    return writes ? editor_.can_write_files() : editor_.can_read_files();
  }
  std::string describe() const override { return local_->describe(); }

 private:
  boost::asio::awaitable<RunResult> run_in_terminal(RunRequest request, support::CancelSource* cancel);
  boost::asio::awaitable<std::string> create_terminal(const std::string& shell, const std::vector<std::string>& argv,
                                                      const std::string& cwd, std::int64_t output_limit,
                                                      support::CancelSource* cancel);
  // The editor opens files in its own process: a path that names a file of whichever process
  // opens it is refused here too, whatever the caller checked (DESIGN §11).
  static void refuse_process_file(const std::string& path);

  EditorHost& editor_;
  std::string session_id_;
  std::shared_ptr<Executor> local_;
};

// `local` for a session's tools: the editor executor when the editor offers fs or terminals.
std::shared_ptr<Executor> local_for_tools(EditorHost& editor, const std::string& session_id,
                                          std::shared_ptr<Executor> local);

}  // namespace runtime::server
