#pragma once
// The `openvaala` command line (DESIGN §3).
#include <string>
#include <vector>

namespace app {

// Returns the process exit code.
int run_cli(const std::vector<std::string>& args);

int run_acp_server();

}  // namespace app
