// `openvaala serve reload`, and the SIGHUP to running servers that it and the plugin commands send.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "support/file_io.hpp"

namespace app {

namespace fs = std::filesystem;

std::vector<int> signal_running_servers() {
  std::vector<int> pids;
  const uid_t me = ::getuid();
  const pid_t self = ::getpid();
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string fn = it->path().filename().string();
    if (fn.empty() || !std::all_of(fn.begin(), fn.end(), ::isdigit)) continue;
    pid_t pid = static_cast<pid_t>(std::stol(fn));
    if (pid == self) continue;
    struct stat st{};
    if (::stat(it->path().c_str(), &st) != 0 || st.st_uid != me) continue;
    auto cmdline = support::read_file(it->path() / "cmdline");
    if (!cmdline || cmdline->empty()) continue;
    std::vector<std::string> argv;
    std::size_t pos = 0;
    while (pos < cmdline->size()) {
      auto nul = cmdline->find('\0', pos);
      if (nul == std::string::npos) nul = cmdline->size();
      argv.push_back(cmdline->substr(pos, nul - pos));
      pos = nul + 1;
    }
    if (argv.size() < 2 || argv[1] != "acp") continue;
    if (fs::path(argv[0]).filename() != "openvaala") continue;
    if (::kill(pid, SIGHUP) == 0) pids.push_back(pid);
  }
  return pids;
}

int run_serve_reload(const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "reload") {
    std::fputs("Usage: openvaala serve reload\n", stderr);
    return 2;
  }
  if (args.size() > 1) {
    std::fprintf(stderr, "openvaala: unexpected argument for 'serve reload': %s\n", args[1].c_str());
    return 2;
  }
  auto pids = signal_running_servers();
  if (pids.empty()) std::fputs("No running openvaala acp servers of this user.\n", stdout);
  else std::fprintf(stdout, "Asked %zu running server(s) to reload.\n", pids.size());
  return 0;
}

}  // namespace app
