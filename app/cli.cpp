#include "app/cli.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>

#include "bridge/process/orphan_guard.hpp"
#include "runtime/executors/helper_protocol.hpp"

namespace app {

namespace {

constexpr const char* kAcpUsage =
    "Usage: openvaala acp [--listen HOST:PORT [--token-file PATH] [--tls-cert PEM --tls-key PEM]\n"
    "                     [--allow-origin URL]... [--max-connections N] [--max-sessions N]\n"
    "                     [--idle-timeout SECONDS]]\n\n"
    "Runs the ACP server on stdin/stdout. Logs go to stderr.\n\n"
    "  --listen HOST:PORT   Serve ACP at HOST:PORT/acp instead, over WebSocket and Streamable HTTP (one\n"
    "                       agent, many connections). Port 0 picks a free port; the address is printed\n"
    "                       on stderr.\n"
    "  --token-file PATH    Require `Authorization: Bearer <token>` (or, on a WebSocket, the subprotocol\n"
    "                       acp.bearer.<token>), the token being the file's text (trimmed). The file must\n"
    "                       have mode 0600. Required unless HOST is loopback.\n"
    "  --tls-cert PEM, --tls-key PEM\n"
    "                       Serve https:// and wss:// with this certificate (chain) and private key.\n"
    "  --allow-origin URL   Let browser pages from this origin (e.g. https://editor.example:8443) in;\n"
    "                       repeatable. Default: any request with an Origin header is refused (403).\n"
    "  --max-connections N  ACP connections open at once (default 256); past it 503.\n"
    "  --max-sessions N     Sessions one connection may hold open (default 64).\n"
    "  --idle-timeout SECONDS\n"
    "                       End a Streamable HTTP connection with no event stream open and no request\n"
    "                       for this long (default 300).\n";

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

// A positive whole number, or nullopt.
std::optional<std::size_t> positive_number(const std::string& text) {
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size() || n == 0) return std::nullopt;
  return n;
}

// `openvaala acp`'s options into `listen`; an error message when they do not parse.
std::optional<std::string> parse_acp_options(const std::vector<std::string>& args, ListenArgs& listen) {
  static const std::map<std::string, std::size_t ListenArgs::*> kNumbers = {
      {"--max-connections", &ListenArgs::max_connections},
      {"--max-sessions", &ListenArgs::max_sessions},
      {"--idle-timeout", &ListenArgs::idle_timeout_seconds}};
  static const std::map<std::string, std::string ListenArgs::*> kTexts = {
      {"--listen", &ListenArgs::address},
      {"--token-file", &ListenArgs::token_file},
      {"--tls-cert", &ListenArgs::tls_cert},
      {"--tls-key", &ListenArgs::tls_key}};
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& flag = args[i];
    const bool known = kNumbers.contains(flag) || kTexts.contains(flag) || flag == "--allow-origin";
    if (!known) return "unknown option for 'acp': " + flag;
    if (i + 1 >= args.size()) return flag + " needs a value";
    const std::string& value = args[++i];
    if (auto text = kTexts.find(flag); text != kTexts.end()) {
      listen.*(text->second) = value;
    } else if (flag == "--allow-origin") {
      listen.allowed_origins.push_back(value);
    } else if (auto n = positive_number(value)) {
      listen.*(kNumbers.at(flag)) = *n;
    } else {
      return flag + " takes a whole number above 0, got '" + value + "'";
    }
  }
  if (listen.address.empty() && args.size() > 1) return args[1] + " needs --listen";
  return std::nullopt;
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
  // Internal: started on the other side of a remote executor's channel (DESIGN §10).
  if (cmd == "executor-helper") {
    const int rc = runtime::executors::helper::serve(STDIN_FILENO, STDOUT_FILENO);
    std::fflush(nullptr);
    ::_exit(rc);
  }
  // Before any logger or guard: it only restricts itself and executes the command.
  if (cmd == "sandbox") return run_sandbox(std::vector<std::string>(args.begin() + 1, args.end()));
  if (cmd == "acp") {
    if (std::find(args.begin(), args.end(), "-h") != args.end() || std::find(args.begin(), args.end(), "--help") != args.end()) {
      std::fputs(kAcpUsage, stdout);
      return 0;
    }
    ListenArgs listen;
    if (auto error = parse_acp_options(args, listen)) return usage_error(*error);
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
