// `openvaala plugin install SRC [--path P] [--ref R] | list | update [NAME] | enable NAME |
// disable NAME | uninstall NAME`.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/engine/plugin_manager.hpp"

namespace app {

namespace eng = runtime::engine;

namespace {

const char* kPluginUsage =
    "Usage: openvaala plugin install SRC [--path P] [--ref R]   install from a git URL or a local folder\n"
    "       openvaala plugin list                               name, version, enabled/disabled, source\n"
    "       openvaala plugin update [NAME]                      re-fetch plugins installed with `plugin install`\n"
    "       openvaala plugin enable NAME | disable NAME | uninstall NAME\n";

int usage(const std::string& msg) {
  std::fprintf(stderr, "openvaala: %s\n%s", msg.c_str(), kPluginUsage);
  return 2;
}

int finish(const eng::CommandResult& r) {
  if (!r.out.empty()) std::fputs(r.out.c_str(), stdout);
  if (!r.err.empty()) std::fputs(r.err.c_str(), stderr);
  if (r.exit_code == 0 && r.changed) {
    auto pids = signal_running_servers();
    if (!pids.empty()) std::fprintf(stdout, "Asked %zu running server(s) to reload.\n", pids.size());
  }
  return r.exit_code;
}

}  // namespace

int run_plugin_cli(const std::vector<std::string>& args) {
  if (args.empty()) return usage("missing plugin command");
  const std::string& cmd = args[0];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(kPluginUsage, stdout);
    return 0;
  }
  eng::PluginManager pm(eng::Engine::default_options(runtime::config::config_root()));
  std::vector<std::string> positional;
  std::string path, ref;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (cmd == "install" && (a == "--path" || a == "--ref")) {
      if (i + 1 >= args.size()) return usage(a + " needs a value");
      (a == "--path" ? path : ref) = args[++i];
    } else if (cmd == "install" && a.rfind("--path=", 0) == 0) {
      path = a.substr(7);
    } else if (cmd == "install" && a.rfind("--ref=", 0) == 0) {
      ref = a.substr(6);
    } else if (!a.empty() && a[0] == '-') {
      return usage("unknown option for 'plugin " + cmd + "': " + a);
    } else {
      positional.push_back(a);
    }
  }
  auto need = [&](std::size_t min, std::size_t max) -> bool { return positional.size() >= min && positional.size() <= max; };
  if (cmd == "install") {
    if (!need(1, 1)) return usage("plugin install needs one source (a git URL or a folder)");
    return finish(pm.install(positional[0], path, ref));
  }
  if (cmd == "list") {
    if (!need(0, 0)) return usage("plugin list takes no arguments");
    return finish(pm.list());
  }
  if (cmd == "update") {
    if (!need(0, 1)) return usage("plugin update takes at most one plugin name");
    return finish(pm.update(positional.empty() ? std::nullopt : std::optional<std::string>(positional[0])));
  }
  if (cmd == "enable" || cmd == "disable" || cmd == "uninstall") {
    if (!need(1, 1)) return usage("plugin " + cmd + " needs one plugin name");
    if (cmd == "enable") return finish(pm.enable(positional[0]));
    if (cmd == "disable") return finish(pm.disable(positional[0]));
    return finish(pm.uninstall(positional[0]));
  }
  return usage("unknown plugin command: " + cmd);
}

}  // namespace app
