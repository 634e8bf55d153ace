// `openvaala serve reload`, and the SIGHUP to running servers that it and the plugin commands send.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/engine/engine.hpp"
#include "support/file_io.hpp"

namespace app {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_nul(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nul = text.find('\0', pos);
    if (nul == std::string::npos) nul = text.size();
    out.push_back(text.substr(pos, nul - pos));
    pos = nul + 1;
  }
  return out;
}

// The config root a running server reads: the rule of runtime::config::config_root() over its
// environment, a relative path taken from its working directory.
std::optional<fs::path> config_root_of(const fs::path& proc_dir) {
  auto environ_text = support::read_file(proc_dir / "environ");
  if (!environ_text) return std::nullopt;
  const std::vector<std::string> vars = split_nul(*environ_text);
  fs::path root = runtime::config::config_root_from([&](const char* name) -> std::string {
    const std::string prefix = std::string(name) + "=";
    for (const auto& v : vars)
      if (v.rfind(prefix, 0) == 0) return v.substr(prefix.size());
    return "";
  });
  std::error_code ec;
  if (root.is_relative()) root = fs::read_symlink(proc_dir / "cwd", ec) / root;
  return root;
}

bool same_folder(const fs::path& a, const fs::path& b) {
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a), ea), cb = fs::weakly_canonical(fs::absolute(b), eb);
  return !ea && !eb && ca == cb;
}

}  // namespace

std::vector<int> signal_running_servers() {
  std::vector<int> pids;
  const uid_t me = ::getuid();
  const pid_t self = ::getpid();
  const fs::path my_root = runtime::config::config_root();
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
    const std::vector<std::string> argv = split_nul(*cmdline);
    if (argv.size() < 2 || argv[1] != "acp") continue;
    if (fs::path(argv[0]).filename() != "openvaala") continue;
    // Only the servers of this config root: another root's servers have other files to read.
    auto root = config_root_of(it->path());
    if (!root || !same_folder(*root, my_root)) continue;
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
  // A configuration that does not load would be refused by every server: say so here, and ask
  // none of them.
  const fs::path root = runtime::config::config_root();
  runtime::config::Diagnostics diags;
  auto engine = runtime::engine::Engine::load(root, diags);
  if (engine->failed()) {
    std::fprintf(stderr, "openvaala: the configuration in %s does not load; no server was asked to reload:\n",
                 root.string().c_str());
    for (const auto& d : engine->diagnostics())
      if (d.severity == runtime::config::Diagnostic::Severity::Error) std::fprintf(stderr, "%s\n", d.to_string().c_str());
    return 1;
  }
  auto pids = signal_running_servers();
  if (pids.empty()) std::fprintf(stdout, "No running openvaala acp server of this user uses %s.\n", root.string().c_str());
  else std::fprintf(stdout, "Asked %zu running server(s) to reload.\n", pids.size());
  return 0;
}

}  // namespace app
