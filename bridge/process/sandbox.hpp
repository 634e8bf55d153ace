#pragma once
// Commands in a sandbox (Landlock, Linux 5.13+; README "Sandbox"). `openvaala sandbox … -- CMD`
// (app/sandbox_cli.cpp) restricts itself with these rules and then executes CMD: the local
// executor starts commands through it, and an editor's terminal is given it as the command, so
// one implementation covers both.
//
// Landlock only grants: a rule gives rights on a folder and everything beneath it. To keep a
// folder out (the config root, ~/.config/openvaala) while everything around it stays readable,
// its ancestors get no rule of their own; their other entries do, one rule each (a grant is
// "split" along the path down to what it excepts).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace bridge::process::sandbox {

namespace fs = std::filesystem;

// kWrite is only ever granted with kRead. kList lists folders (their entries' names), nothing more.
enum Rights : unsigned { kRead = 1u, kWrite = 2u, kList = 4u };
inline constexpr unsigned kReadWrite = kRead | kWrite;

// `rights` on `path` and everything beneath it, except `except` (and beneath those).
struct Grant {
  fs::path path;
  unsigned rights = kRead;
  std::vector<fs::path> except;
};

// One Landlock rule: `rights` on `path` and everything beneath it.
struct Rule {
  fs::path path;
  unsigned rights = kRead;
  bool operator==(const Rule&) const = default;
};

// What a command may touch beyond reading: the folders it may write (the session's roots), and
// the paths it may neither read nor write wherever they lie (the config root, the credentials
// file, the MCP token file).
struct Policy {
  std::vector<fs::path> write;
  std::vector<fs::path> deny;
};

// Listing every folder (names only: `ls ~` and `ls /` work, though Landlock cannot grant reading
// around an except without leaving its ancestors unlistable); reading everything but /dev; reading
// and writing the harmless devices (null, tty, ...), the temp folders and policy.write;
// policy.deny excepted from every grant but the listing.
std::vector<Grant> grants_of(const Policy& policy);

// The rules that grant exactly `grants`: each path resolved (missing ones left out); a grant
// with an except beneath it replaced by rules on its folder's entries, recursively along the
// path to the except; no rule at or under an except; none on symlinks met while splitting (their
// targets are reached through their own ancestors' rules). Rules on one path are merged.
std::vector<Rule> rules_of(const std::vector<Grant>& grants);

// The kernel's Landlock ABI version (1, 2, ...), or -errno when it has none (ENOSYS: not built
// in; EOPNOTSUPP: disabled at boot).
int landlock_abi();
// Why the sandbox cannot run on this kernel, for an ABI answer < 0.
std::string unavailable_reason(int abi);

// The Landlock file-system rights handled for a kernel of this ABI: the ones it knows (the
// best-effort pattern of landlock(7)); asking for more fails the whole ruleset.
std::uint64_t handled_access(int abi);

// Restricts this process (and what it executes) to `rules`, with no_new_privs. "" on success,
// else why not (then nothing may run: the caller exits).
std::string restrict_self(const std::vector<Rule>& rules);

// The argv that runs a command under `policy`: {program, "sandbox", "--deny", D, ..., "--write",
// W, ..., "--"}; the command's argv follows.
std::vector<std::string> helper_argv(const fs::path& program, const Policy& policy);

// The program whose `sandbox` command applies a policy: `openvaala acp` sets itself at start.
// Empty when never set (then sandboxed commands are refused).
void set_helper_program(fs::path program);
fs::path helper_program();

}  // namespace bridge::process::sandbox
