#include "runtime/config/secrets.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "bridge/mcp/oauth_secrets.hpp"
#include "bridge/mcp/oauth_store.hpp"
#include "runtime/config/credentials.hpp"
#include "runtime/config/main_config.hpp"

namespace runtime::config {

namespace {

// Both are never destroyed: a turn ended while the process exits (a pool thread, or an agent that
// outlives main's locals, as the agent fuzzer's does) still journals through redact_secrets, and a
// destroyed list there was a heap-use-after-free (found by the fuzzer's ASan replay).
std::shared_mutex& secrets_mutex() {
  static auto* m = new std::shared_mutex;
  return *m;
}
// Longest first, so a key that contains another is replaced whole.
std::vector<std::string>& secrets() {
  static auto* s = new std::vector<std::string>;
  return *s;
}

void remember_env(const std::string& name) {
  if (const char* v = std::getenv(name.c_str())) remember_secret(v);
}

}  // namespace

void remember_secret(std::string_view value) {
  if (value.size() < 6) return;
  std::unique_lock lock(secrets_mutex());
  auto& all = secrets();
  if (std::find(all.begin(), all.end(), value) != all.end()) return;
  all.emplace_back(value);
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
}

void remember_configured_keys(const std::filesystem::path& config_root) {
  Diagnostics ignored;  // the loaders report their problems where they are used
  const MainConfig cfg = load_main_config(config_root, ignored);
  for (const auto& [_, p] : cfg.providers)
    if (!p.api_key_env.empty()) remember_env(p.api_key_env);
  remember_env("OPENAI_API_KEY");
  remember_env("ANTHROPIC_API_KEY");
  for (const auto& [_, key] : load_credentials(config_root, ignored).api_keys) remember_secret(key);
  // MCP OAuth tokens: those stored now, and every one read or written later.
  bridge::mcp::oauth::watch_secrets(&remember_secret);
  bridge::mcp::oauth::remember_stored_secrets(bridge::mcp::oauth::token_file(config_root));
}

std::size_t shortest_redacted_prefix(std::size_t key_size) {
  return std::min(key_size, std::clamp((key_size + 1) / 2, kMinRedactedPrefix, kMaxRedactedPrefix));
}

namespace {

// How many characters of `key` start `text` at `at` (the key's prefix shown there).
std::size_t prefix_length_at(std::string_view text, std::size_t at, std::string_view key) {
  std::size_t n = 0;
  while (n < key.size() && at + n < text.size() && text[at + n] == key[n]) ++n;
  return n;
}

// Replaces in `out` every run that is the whole of `key` or a prefix of it long enough to matter.
// Found by searching for the shortest such prefix, so a key costs one scan of the text, as before.
void redact_key(std::string& out, std::string_view key) {
  const std::string_view needle = key.substr(0, shortest_redacted_prefix(key.size()));
  for (std::size_t at = out.find(needle); at != std::string::npos; at = out.find(needle, at + kRedacted.size()))
    out.replace(at, prefix_length_at(out, at, key), kRedacted);
}

}  // namespace

std::string redact_secrets(std::string_view text) {
  std::string out(text);
  std::shared_lock lock(secrets_mutex());
  for (const auto& key : secrets()) redact_key(out, key);
  return out;
}

}  // namespace runtime::config
