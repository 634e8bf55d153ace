#pragma once
// An executor in memory for the tools' unit tests: files in a map, every command recorded and
// answered with a scripted result.
#include <map>
#include <string>
#include <vector>

#include "runtime/protocol/executor.hpp"

namespace fakes {

class MemoryExecutor : public runtime::Executor {
 public:
  std::map<std::string, std::string> files;
  std::vector<std::string> removed;
  std::vector<runtime::RunRequest> runs;
  runtime::RunResult answer{0, std::nullopt, false, "ran\n", false};
  bool elsewhere = false;  // opens files in another process (as the editor does)
  runtime::ExecutorInfo info_{"local", "local", "", true, false, "/ws"};

  const runtime::ExecutorInfo& info() const override { return info_; }
  boost::asio::awaitable<std::string> working_directory(support::CancelSource*) override { co_return "/ws"; }
  boost::asio::awaitable<std::string> read_file(const std::string& path, support::CancelSource*) override {
    auto it = files.find(path);
    if (it == files.end()) throw runtime::ExecutorError("no such file: " + path);
    co_return it->second;
  }
  boost::asio::awaitable<void> write_file(const std::string& path, const std::string& content,
                                          support::CancelSource*) override {
    files[path] = content;
    co_return;
  }
  boost::asio::awaitable<void> remove_file(const std::string& path, support::CancelSource*) override {
    removed.push_back(path);
    files.erase(path);
    co_return;
  }
  boost::asio::awaitable<runtime::FileInfo> stat(const std::string& path, support::CancelSource*) override {
    auto it = files.find(path);
    runtime::FileInfo info;
    if (it != files.end()) {
      info.exists = true;
      info.size = it->second.size();
    }
    co_return info;
  }
  boost::asio::awaitable<runtime::RunResult> run(runtime::RunRequest request, support::CancelSource*) override {
    runs.push_back(request);
    if (request.on_terminal && !answer.terminal_id.empty()) request.on_terminal(answer.terminal_id);
    co_return answer;
  }
  bool opens_elsewhere(bool) const override { return elsewhere; }
};

}  // namespace fakes
