#pragma once
// The API key values this process knows of, and the one function that takes them out of text
// (DESIGN §11: a key value never appears in a log, an error sent to the editor, or the session
// journal). Some gateways echo the key in an error body; a command may print its environment.
// Thread-safe; the set only grows for the life of the process.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace runtime::config {

inline constexpr std::string_view kRedacted = "[redacted]";

// Values shorter than 6 characters are not keys worth hiding, and hiding them would mangle text.
void remember_secret(std::string_view value);
// Every key the configuration in `config_root` names: credentials.yaml, the variable named by
// each provider's api_key_env, $OPENAI_API_KEY and $ANTHROPIC_API_KEY.
void remember_configured_keys(const std::filesystem::path& config_root);
// `text` with every remembered key value replaced by kRedacted, and every long prefix of one too:
// some gateways echo a key cut short ("Incorrect API key provided: sk-abc…"), and half a key is
// half the secret. A prefix counts from shortest_redacted_prefix characters on.
std::string redact_secrets(std::string_view text);

// Half the key, but at least 12 characters and at most 20; the whole key when it is shorter.
// Shorter runs give little away and are often public (the scheme "sk-ant-api03-" is 13 of a
// 108-character key), so redacting them would mangle ordinary text; from 20 on, a prefix of
// any key is redacted.
inline constexpr std::size_t kMinRedactedPrefix = 12;
inline constexpr std::size_t kMaxRedactedPrefix = 20;
std::size_t shortest_redacted_prefix(std::size_t key_size);

}  // namespace runtime::config
