#pragma once
// What an "Always allow" / "Always reject" answer is remembered by (issue 36: Claude Code's
// "don't ask again for `npm test`", Codex's approval_keys): a command by its program and
// subcommand, each part of a compound command apart. Pure functions, tested as a table.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runtime::tools {

// The keys of a bash command line, one per simple command it runs: `a && b`, `a | b`, `a; b`
// and each `$(…)` / backtick substitution give one key each, in order, without repeats. A key is
// the program, and for programs with subcommands (git, npm, cargo, …) the subcommand too:
// "npm test", "git status", "rm". nullopt when the line cannot be keyed safely, so no answer to
// it is remembered: unbalanced quotes, a redirection to a file, a here-document, shell keywords
// (if, for, …), a program that runs another command (sudo, env, xargs, bash -c, eval, …) or a
// program named by a variable.
std::optional<std::vector<std::string>> command_keys(std::string_view command);

}  // namespace runtime::tools
