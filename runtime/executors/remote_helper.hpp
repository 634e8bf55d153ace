#pragma once
// A remote executor's helper (DESIGN §10): `openvaala executor-helper` started once over the
// executor's Channel, copied there first when that machine or container does not have this
// build yet. Every file operation and command is then one request on that one stream, instead of
// one `ssh`/`podman exec` process per operation. RemoteShellExecutor uses it while it is alive
// and its own per-operation scripts where the helper cannot run.
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/executors/channel.hpp"
#include "runtime/executors/executors.hpp"
#include "runtime/executors/helper_client.hpp"

namespace runtime::executors {

class RemoteHelper {
 public:
  // What the connect probe learned there that the helper needs.
  struct There {
    std::string workdir;  // absolute
    std::string arch;     // uname -m
    bool has_build = false;  // ~/.cache/openvaala/bin/<hash>/openvaala is there
  };
  // Makes an ExecutorError naming the executor; on_lost runs before an error about a lost channel.
  using ErrorFor = std::function<ExecutorError(const std::string&)>;

  // Blocking: copies the helper there when needed and starts it. Null and `why` when it cannot
  // run there (another architecture, no space, a `noexec` home, an old libc).
  static std::shared_ptr<RemoteHelper> start(const Deps& deps, const Channel& channel, const config::ExecutorConfig& c,
                                             const There& there, const std::atomic<bool>* cancel, std::string& why);
  // The lines the connect probe adds to learn `There`: "OVARCH …", and "OVHELPER" when the build
  // `hash` is there already.
  static std::string probe_lines(const std::string& hash);
  static void read_probe(const std::string& output, There& there);

  RemoteHelper(std::shared_ptr<HelperClient> client, std::string path) : client_(std::move(client)), path_(std::move(path)) {}
  void set_errors(ErrorFor error_for, std::function<void()> on_lost) {
    error_for_ = std::move(error_for);
    on_lost_ = std::move(on_lost);
  }

  boost::asio::awaitable<std::string> read_file(const std::string& path, support::CancelSource* cancel);
  boost::asio::awaitable<void> write_file(const std::string& path, std::string content, support::CancelSource* cancel);
  boost::asio::awaitable<void> remove_file(const std::string& path, support::CancelSource* cancel);
  boost::asio::awaitable<FileInfo> stat(const std::string& path, support::CancelSource* cancel);
  // `realpath -m -z` of each path, then of the config root there (NUL-separated).
  boost::asio::awaitable<std::string> real_paths(const std::vector<std::string>& paths, support::CancelSource* cancel);
  boost::asio::awaitable<RunResult> run(const RunRequest& request, support::CancelSource* cancel);

  bool alive() const { return client_->alive(); }
  const std::string& path() const { return path_; }  // where it runs there, under $HOME
  void close() { client_->close(); }

 private:
  // (`what` by value: a temporary bound to a reference inside co_await is destroyed twice by GCC 12.)
  boost::asio::awaitable<std::string> call(char kind, std::string payload, std::string what, support::CancelSource* cancel);
  // The channel ended: on_lost, then an error "<what>: the connection was lost (…)<after>".
  [[noreturn]] void lost(const std::string& what, const std::string& after = {});

  std::shared_ptr<HelperClient> client_;
  std::string path_;
  ErrorFor error_for_;
  std::function<void()> on_lost_;
};

}  // namespace runtime::executors
