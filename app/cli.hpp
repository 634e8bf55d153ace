#pragma once
// The `openvaala` command line (DESIGN §3).
#include <string>
#include <vector>

namespace app {

// Returns the process exit code.
int run_cli(const std::vector<std::string>& args);

int run_acp_server();
// `openvaala acp --listen HOST:PORT [--token-file PATH]`: ACP over WebSocket at /acp.
struct ListenArgs {
  std::string address;     // HOST:PORT
  std::string token_file;  // empty: none
  std::string tls_cert;    // PEM paths; both or neither
  std::string tls_key;
  std::vector<std::string> allowed_origins;  // --allow-origin, repeatable
  std::size_t max_connections = 256;
  std::size_t max_sessions = 64;  // per connection
  std::size_t idle_timeout_seconds = 300;
};
int run_acp_network_server(const ListenArgs& args);
int run_config_check(const std::vector<std::string>& args);  // args after `config check`
int run_serve_reload(const std::vector<std::string>& args);  // args after `serve`
int run_plugin_cli(const std::vector<std::string>& args);    // args after `plugin`
int run_login(const std::vector<std::string>& args);         // args after `login`
int run_mcp_cli(const std::vector<std::string>& args);       // args after `mcp`
int run_sandbox(const std::vector<std::string>& args);       // args after `sandbox`

// Sends SIGHUP to every `openvaala acp` process of this user (except this process), which makes
// it reload its configuration. Returns their pids.
std::vector<int> signal_running_servers();

}  // namespace app
