#pragma once
// What posix_spawn is given for a ProcessSpec (run_process): argv, envp with the overlay applied,
// and the paths argv[0] is tried at, in execvp order.
#include <string>
#include <vector>

#include "bridge/process/child_process.hpp"

namespace bridge::process::detail {

// Candidate paths for argv[0], in execvp order, on `path_var`.
std::vector<std::string> exec_candidates(const std::string& file, const std::string& path_var);

// The inherited environment with the overlay applied (later duplicates in the overlay win), and
// the PATH that argv[0] is looked up on.
struct ChildEnvironment {
  std::vector<std::string> entries;
  std::string path_var;
};

ChildEnvironment child_environment(const ProcessSpec& spec);

// What posix_spawn is given: argv, envp and the PATH candidates. The pointer arrays point into
// the strings held here, so it is built in place and never copied or moved.
class ChildCommand {
 public:
  explicit ChildCommand(const ProcessSpec& spec)
      : env_(child_environment(spec)),
        argv_strings_(spec.argv),
        candidates_(exec_candidates(spec.argv[0], env_.path_var)) {
    envp_.reserve(env_.entries.size() + 1);
    for (auto& s : env_.entries) envp_.push_back(s.data());
    envp_.push_back(nullptr);
    for (auto& s : argv_strings_) argv_.push_back(s.data());
    argv_.push_back(nullptr);
  }
  ChildCommand(const ChildCommand&) = delete;
  ChildCommand& operator=(const ChildCommand&) = delete;

  char* const* argv() const { return argv_.data(); }
  char* const* envp() const { return envp_.data(); }
  const std::vector<std::string>& candidates() const { return candidates_; }

 private:
  ChildEnvironment env_;
  std::vector<std::string> argv_strings_;
  std::vector<std::string> candidates_;
  std::vector<char*> envp_;
  std::vector<char*> argv_;
};

}  // namespace bridge::process::detail
