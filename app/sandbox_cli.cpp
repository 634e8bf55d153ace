// `openvaala sandbox [--deny PATH]... [--write PATH]... -- COMMAND [ARG]...`: restricts itself with
// Landlock (bridge/process/sandbox.hpp), then executes COMMAND. `openvaala acp` runs the model's
// commands through it, locally and in the editor's terminal. When the sandbox cannot be applied
// the command does not run: exit 125 with the reason and the way to opt out on stderr.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app/cli.hpp"
#include "bridge/process/sandbox.hpp"
#include "runtime/config/paths.hpp"

namespace app {

namespace sandbox = bridge::process::sandbox;

namespace {

constexpr int kSandboxFailed = 125;  // as env(1) and chroot(1) report their own failures
constexpr const char* kUsage =
    "Usage: openvaala sandbox [--deny PATH]... [--write PATH]... -- COMMAND [ARG]...\n"
    "\n"
    "Runs COMMAND under Landlock: it reads everything but the --deny paths (and most of /dev), and\n"
    "writes only under the --write paths, the temp folders (/tmp, /var/tmp, $TMPDIR, /dev/shm) and\n"
    "harmless devices. Exit 125 without running it when the sandbox cannot be applied.\n";

int refuse(const std::string& why) {
  const auto config = runtime::config::config_root() / "config.yaml";
  std::fprintf(stderr,
               "openvaala sandbox: %s. The command was not run. To run commands without the sandbox, set "
               "'sandbox: off' in %s.\n",
               why.c_str(), config.c_str());
  return kSandboxFailed;
}

int usage_error(const std::string& what) {
  std::fprintf(stderr, "openvaala sandbox: %s\n\n%s", what.c_str(), kUsage);
  return kSandboxFailed;
}

}  // namespace

int run_sandbox(const std::vector<std::string>& args) {
  sandbox::Policy policy;
  std::size_t i = 0;
  for (; i < args.size() && args[i] != "--"; ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    const bool has_value = i + 1 < args.size();
    if (args[i] == "--write" && has_value) policy.write.emplace_back(args[++i]);
    else if (args[i] == "--deny" && has_value) policy.deny.emplace_back(args[++i]);
    else return usage_error("unknown option '" + args[i] + "'");
  }
  if (i + 1 >= args.size()) return usage_error("no command given after '--'");
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) policy.write.emplace_back(tmp);
  if (auto error = sandbox::restrict_self(sandbox::rules_of(sandbox::grants_of(policy))); !error.empty())
    return refuse(error);
  std::vector<std::string> command(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  std::vector<char*> argv;
  for (auto& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  const int err = errno;
  std::fprintf(stderr, "openvaala sandbox: cannot run '%s': %s\n", argv[0], std::strerror(err));
  return err == ENOENT ? 127 : 126;
}

}  // namespace app
