// The registry of long-lived children's process groups, and killing them on the way out.
#include "bridge/process/process_groups.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "bridge/process/child_spawn.hpp"
#include "bridge/process/orphan_guard.hpp"

namespace bridge::process {

namespace {
std::mutex& mu() {
  static std::mutex m;
  return m;
}
std::set<pid_t>& groups() {
  static std::set<pid_t> g;
  return g;
}
std::map<pid_t, int>& stdin_ends() {  // group -> our end of its leader's stdin
  static std::map<pid_t, int> i;
  return i;
}
}  // namespace

void register_process_group(pid_t pgid, int input_fd) {
  guard_group(pgid);
  std::lock_guard lock(mu());
  groups().insert(pgid);
  if (input_fd >= 0) stdin_ends()[pgid] = input_fd;
}

void forget_group_input(pid_t pgid) {
  std::lock_guard lock(mu());
  stdin_ends().erase(pgid);
}

void unregister_process_group(pid_t pgid) {
  std::lock_guard lock(mu());
  groups().erase(pgid);
  stdin_ends().erase(pgid);
  release_group(pgid);
}

bool process_group_gone(pid_t pgid) {
  // Not a group: waitpid(-1) would reap any child and kill(1, 0) asks about init.
  if (pgid <= 0) return true;
  int st = 0;
  pid_t r;
  while ((r = ::waitpid(pgid, &st, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (r == pgid) child_reaped(pgid);
  return ::kill(-pgid, 0) != 0 && errno == ESRCH;
}

void end_process_group(boost::asio::any_io_executor ex, pid_t pgid, std::chrono::milliseconds grace) {
  if (pgid <= 0) return;
  ::kill(-pgid, SIGTERM);
  auto wait = [ex, pgid, grace]() -> boost::asio::awaitable<void> {
    boost::asio::steady_timer t(ex);
    auto poll_until = [&](std::chrono::steady_clock::time_point until) -> boost::asio::awaitable<bool> {
      while (!process_group_gone(pgid)) {
        if (std::chrono::steady_clock::now() >= until) co_return false;
        t.expires_after(std::chrono::milliseconds(10));
        co_await t.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      }
      co_return true;
    };
    if (!co_await poll_until(std::chrono::steady_clock::now() + grace)) {
      ::kill(-pgid, SIGKILL);
      co_await poll_until(std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
    }
    unregister_process_group(pgid);
  };
  boost::asio::co_spawn(ex, std::move(wait), boost::asio::detached);
}

void end_all_process_groups_on_exit() {
  if (!orphan_guard_running()) return kill_all_process_groups();
  std::vector<int> fds;
  {
    std::lock_guard lock(mu());
    for (const auto& [_, fd] : stdin_ends()) fds.push_back(fd);
  }
  if (hand_inputs_to_guard(fds)) return;
  // The guard did not take them: signal now, as the guard would.
  std::lock_guard lock(mu());
  for (pid_t g : groups()) ::kill(-g, SIGTERM);
}

void kill_all_process_groups(std::chrono::milliseconds grace) {
  std::vector<pid_t> all;
  {
    std::lock_guard lock(mu());
    all.assign(groups().begin(), groups().end());
    groups().clear();
  }
  if (all.empty()) return;
  for (pid_t g : all) ::kill(-g, SIGTERM);
  const auto until = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < until) {
    bool any = false;
    for (pid_t g : all)
      if (!process_group_gone(g)) any = true;
    if (!any) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (pid_t g : all) ::kill(-g, SIGKILL);
  for (int i = 0; i < 20; ++i) {
    bool any = false;
    for (pid_t g : all)
      if (!process_group_gone(g)) any = true;
    if (!any) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace bridge::process
