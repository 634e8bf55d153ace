#include "app/cli.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "bridge/process/orphan_guard.hpp"

namespace app {

namespace {

constexpr const char* kAcpUsage =
    "Usage: openvaala acp [--listen HOST:PORT [--token-file PATH]]\n\n"
    "Runs the ACP server on stdin/stdout. Logs go to stderr.\n\n"
    "  --listen HOST:PORT   Serve ACP over WebSocket at ws://HOST:PORT/acp instead (one agent, many\n"
    "                       connections). Port 0 picks a free port; the address is printed on stderr.\n"
    "  --token-file PATH    Require `Authorization: Bearer <token>`, the token being the file's text\n"
    "                       (trimmed). The file must have mode 0600. Required unless HOST is loopback.\n";

const char* kUsage =
    "Usage: openvaala <command> [options]\n"
    "\n"
    "Commands:\n"
    "  acp                          Run the Agent Client Protocol server on stdio (editors run this)\n"
    "  config check [--cwd DIR] [--json]\n"
    "                               Show what a session in DIR would load, and every problem\n"
    "  serve reload                 Make every running `openvaala acp` reload its configuration\n"
    "  plugin install SRC [--path P] [--ref R] | list | update [NAME] | enable NAME | disable NAME | uninstall NAME\n"
    "                               Manage plugins\n"
    "  login [--provider ID] [--api-type openai|anthropic] [--base-url URL] [--model NAME]\n"
    "                               Store a model provider API key (asks on a terminal; else the key is stdin's first line)\n"
    "  mcp list [--no-connect] | login ID | logout ID\n"
    "                               MCP servers with their sign-in and connection state; OAuth sign-in/out of one\n"
    "  sandbox [--deny PATH]... [--write PATH]... -- COMMAND [ARG]...\n"
    "                               Run COMMAND in the Landlock sandbox the model's commands run in\n"
    "\n"
    "Options:\n"
    "  -h, --help                   Show this help\n"
    "  -V, --version                Show the version\n"
    "\n"
    "Configuration lives in $OPENVAALA_CONFIG_DIR (default ~/.config/openvaala).\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "openvaala: %s\n\n%s", message.c_str(), kUsage);
  return 2;
}

}  // namespace

int run_cli(const std::vector<std::string>& args) {
  if (args.empty()) return usage_error("no command given");
  const std::string& cmd = args[0];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "-V" || cmd == "--version") {
    std::fputs("openvaala " OPENVAALA_VERSION "\n", stdout);
    return 0;
  }
  // Internal: started by `openvaala acp` itself (bridge/process/orphan_guard.hpp), not by users.
  if (cmd == "__orphan-guard")
    return bridge::process::run_orphan_guard(STDIN_FILENO, std::chrono::milliseconds(500),
                                             args.size() > 1 ? static_cast<pid_t>(std::atol(args[1].c_str())) : 0);
  // Before any logger or guard: it only restricts itself and executes the command.
  if (cmd == "sandbox") return run_sandbox(std::vector<std::string>(args.begin() + 1, args.end()));
  if (cmd == "acp") {
    ListenArgs listen;
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "-h" || args[i] == "--help") {
        std::fputs(kAcpUsage, stdout);
        return 0;
      }
      const bool takes_value = args[i] == "--listen" || args[i] == "--token-file";
      if (takes_value && i + 1 >= args.size()) return usage_error(args[i] + " needs a value");
      if (args[i] == "--listen") listen.address = args[++i];
      else if (args[i] == "--token-file") listen.token_file = args[++i];
      else return usage_error("unknown option for 'acp': " + args[i]);
    }
    if (listen.address.empty() && !listen.token_file.empty()) return usage_error("--token-file needs --listen");
    return listen.address.empty() ? run_acp_server() : run_acp_network_server(listen);
  }
  // The other commands print their results (and the problems they find) on stdout themselves;
  // only a log line about something unexpected goes to stderr, never into that output.
  spdlog::set_default_logger(spdlog::stderr_color_st("openvaala"));
  spdlog::set_level(spdlog::level::err);
  if (cmd == "config") {
    if (args.size() < 2 || args[1] != "check") return usage_error("unknown config command (use: config check)");
    return run_config_check(std::vector<std::string>(args.begin() + 2, args.end()));
  }
  if (cmd == "serve") return run_serve_reload(std::vector<std::string>(args.begin() + 1, args.end()));
  if (cmd == "plugin") return run_plugin_cli(std::vector<std::string>(args.begin() + 1, args.end()));
  if (cmd == "login") return run_login(std::vector<std::string>(args.begin() + 1, args.end()));
  if (cmd == "mcp") return run_mcp_cli(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!cmd.empty() && cmd[0] == '-') return usage_error("unknown option: " + cmd);
  return usage_error("unknown command: " + cmd);
}

}  // namespace app
