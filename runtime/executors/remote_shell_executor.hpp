#pragma once
// An executor on another machine or in a container (DESIGN §10), reached through a Channel: every
// operation is one sh script sent over it (read = cat, write = a temp file and mv, run = bash in
// its own process group, ...). The ssh, container and devcontainer executors are this with their
// channels.
#include <memory>

#include "runtime/executors/channel.hpp"
#include "runtime/executors/executors.hpp"

namespace runtime::executors {

std::shared_ptr<Executor> make_remote_shell_executor(Deps deps, config::ExecutorConfig config,
                                                     std::unique_ptr<Channel> channel);

// Opens the channel now (blocking), reports what is there and one round trip's time, and closes it.
Probe probe_channel(const config::ExecutorConfig& config, std::unique_ptr<Channel> channel);

// `export K='v'` lines for a POSIX shell.
std::string env_exports(const EnvList& env);

// The last line of a command's output, without its line end.
std::string last_line(std::string s);

}  // namespace runtime::executors
