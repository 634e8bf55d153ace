#pragma once
// The secrets of MCP OAuth sign-ins (tokens, client secrets), told to whoever hides secrets from
// logs and the journal (the runtime passes config::remember_secret; DESIGN §11).
#include <filesystem>
#include <string_view>

namespace bridge::mcp::oauth {

// Called with every token and client secret a TokenStore reads or writes, and by
// remember_stored_secrets. Set at startup; nullptr: nobody is told.
using SecretObserver = void (*)(std::string_view);
void watch_secrets(SecretObserver observer);
// Tells the observer every secret stored in `file` (mcp_tokens.json) now.
void remember_stored_secrets(const std::filesystem::path& file);

}  // namespace bridge::mcp::oauth
