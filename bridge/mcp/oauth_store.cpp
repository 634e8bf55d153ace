#include "bridge/mcp/oauth_store.hpp"
#include "bridge/mcp/oauth_secrets.hpp"

#include <boost/json.hpp>

#include <atomic>

#include "support/file_io.hpp"
#include "support/json_read.hpp"

namespace bridge::mcp::oauth {

namespace json = boost::json;
namespace fs = std::filesystem;

fs::path token_file(const fs::path& config_root) { return config_root / "mcp_tokens.json"; }

namespace {

json::object read_all(const fs::path& file) {
  auto text = support::read_file(file);
  if (!text) return {};
  boost::system::error_code ec;
  auto v = json::parse(*text, ec);
  if (ec || !v.is_object()) return {};
  return v.as_object();
}

std::atomic<SecretObserver> secret_observer{nullptr};

void tell_secrets(const StoredAuth& a) {
  auto observer = secret_observer.load();
  if (!observer) return;
  for (const auto* s : {&a.client_secret, &a.tokens.access_token, &a.tokens.refresh_token})
    if (!s->empty()) observer(*s);
}

}  // namespace

std::optional<StoredAuth> TokenStore::load(const std::string& server_id, const std::string& url) const {
  auto all = read_all(file_);
  auto* servers = all.if_contains("servers");
  if (!servers || !servers->is_object()) return std::nullopt;
  auto* e = servers->as_object().if_contains(server_id);
  if (!e || !e->is_object()) return std::nullopt;
  const auto& o = e->as_object();
  StoredAuth a;
  a.url = std::string(support::str_at(o, "url"));
  if (a.url != url) return std::nullopt;
  a.client_id = std::string(support::str_at(o, "client_id"));
  a.client_secret = std::string(support::str_at(o, "client_secret"));
  if (auto* r = o.if_contains("registered"); r && r->is_bool()) a.registered = r->as_bool();
  a.redirect_uri = std::string(support::str_at(o, "redirect_uri"));
  a.token_endpoint = std::string(support::str_at(o, "token_endpoint"));
  a.revocation_endpoint = std::string(support::str_at(o, "revocation_endpoint"));
  a.resource = std::string(support::str_at(o, "resource"));
  a.tokens.access_token = std::string(support::str_at(o, "access_token"));
  a.tokens.refresh_token = std::string(support::str_at(o, "refresh_token"));
  a.tokens.scope = std::string(support::str_at(o, "scope"));
  if (auto* x = o.if_contains("expires_at"); x && x->is_int64()) a.tokens.expires_at = x->as_int64();
  tell_secrets(a);
  return a;
}

void TokenStore::save(const std::string& server_id, const StoredAuth& a) const {
  tell_secrets(a);
  auto all = read_all(file_);
  auto& servers = all["servers"];
  if (!servers.is_object()) servers = json::object{};
  servers.as_object()[server_id] = json::object{
      {"url", a.url},
      {"client_id", a.client_id},
      {"client_secret", a.client_secret},
      {"registered", a.registered},
      {"redirect_uri", a.redirect_uri},
      {"token_endpoint", a.token_endpoint},
      {"revocation_endpoint", a.revocation_endpoint},
      {"resource", a.resource},
      {"access_token", a.tokens.access_token},
      {"refresh_token", a.tokens.refresh_token},
      {"expires_at", a.tokens.expires_at},
      {"scope", a.tokens.scope},
  };
  std::error_code ec;
  fs::create_directories(file_.parent_path(), ec);
  support::write_file_atomically(file_, json::serialize(all) + "\n", 0600);
}

bool TokenStore::erase(const std::string& server_id) const {
  auto all = read_all(file_);
  auto* servers = all.if_contains("servers");
  if (!servers || !servers->is_object() || !servers->as_object().erase(server_id)) return false;
  support::write_file_atomically(file_, json::serialize(all) + "\n", 0600);
  return true;
}

void watch_secrets(SecretObserver observer) { secret_observer.store(observer); }

void remember_stored_secrets(const fs::path& file) {
  auto observer = secret_observer.load();
  auto all = read_all(file);
  auto* servers = all.if_contains("servers");
  if (!observer || !servers || !servers->is_object()) return;
  for (const auto& [_, entry] : servers->as_object()) {
    if (!entry.is_object()) continue;
    for (const char* k : {"client_secret", "access_token", "refresh_token"})
      if (auto v = std::string(support::str_at(entry.as_object(), k)); !v.empty()) observer(v);
  }
}

}  // namespace bridge::mcp::oauth
