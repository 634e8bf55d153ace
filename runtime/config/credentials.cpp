#include "runtime/config/credentials.hpp"
#include "runtime/config/paths.hpp"

#include "support/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "runtime/config/yaml_reading.hpp"

namespace runtime::config {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHeader =
    "# OpenVaala model provider API keys, written by `openvaala login`.\n"
    "# Keep this file private (mode 0600). An API key in the variable named by a provider's\n"
    "# api_key_env in config.yaml takes precedence over the key stored here.\n";

std::string octal_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

}  // namespace

std::optional<std::string> Credentials::api_key(const std::string& provider_id) const {
  auto it = api_keys.find(provider_id);
  if (it == api_keys.end()) return std::nullopt;
  return it->second;
}

fs::path credentials_file(const fs::path& config_root) { return config_root / "credentials.yaml"; }

Credentials load_credentials(const fs::path& config_root, Diagnostics& diags) {
  Credentials out;
  out.file = credentials_file(config_root);
  struct stat st {};
  if (::stat(out.file.c_str(), &st) != 0) return out;  // missing: nothing stored
  if ((st.st_mode & 077) != 0)
    diags.push_back({Diagnostic::Severity::Warning, out.file.string(), 0,
                     "holds API keys but its mode is " + octal_mode(st.st_mode) +
                         ", readable by other users; run `chmod 600 " + out.file.string() + "`"});
  YamlReader r(out.file, diags);
  auto root = r.load();
  if (!root || root->IsNull()) return out;
  if (!r.expect_map(*root, "credentials.yaml")) return out;
  r.check_keys(*root, {"providers"}, "credentials.yaml");
  auto providers = (*root)["providers"];
  if (!providers || providers.IsNull() || !r.expect_map(providers, "'providers'")) return out;
  for (const auto& kv : providers) {
    const std::string id = kv.first.as<std::string>("");
    const YAML::Node& entry = kv.second;
    if (!r.expect_map(entry, "provider '" + id + "'")) continue;
    r.check_keys(entry, {"api_key"}, "provider '" + id + "'");
    auto key = r.string(entry, "api_key");
    if (!key) {
      if (!entry["api_key"]) r.error(kv.first, "provider '" + id + "': 'api_key' is missing");
      else if (entry["api_key"].IsNull()) r.error(entry["api_key"], "provider '" + id + "': 'api_key' is empty");
      continue;
    }
    if (key->empty()) {
      r.error(entry["api_key"], "provider '" + id + "': 'api_key' is empty");
      continue;
    }
    out.api_keys[id] = *key;
  }
  return out;
}


void store_api_key(const fs::path& config_root, const std::string& provider_id, const std::string& api_key) {
  if (provider_id.empty()) throw std::runtime_error("the provider id is empty");
  if (api_key.empty()) throw std::runtime_error("the API key is empty");
  const fs::path file = credentials_file(config_root);
  std::error_code ec;
  create_private_directories(config_root, ec);
  if (ec) throw std::runtime_error("cannot create " + config_root.string() + ": " + ec.message());

  YAML::Node root;
  if (fs::exists(file, ec)) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(file.string() + ": cannot be read");
    std::stringstream ss;
    ss << in.rdbuf();
    try {
      root = YAML::Load(ss.str());
    } catch (const YAML::ParserException& e) {
      throw std::runtime_error(file.string() + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg +
                               " (fix or remove the file, then log in again)");
    } catch (const YAML::Exception& e) {
      throw std::runtime_error(file.string() + ": invalid YAML: " + e.msg);
    }
  }
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap())
    throw std::runtime_error(file.string() + ":" + std::to_string(YamlReader::line_of(root)) +
                             ": credentials.yaml must be a mapping (fix or remove the file, then log in again)");
  YAML::Node providers = root["providers"];
  if (!providers || providers.IsNull()) {
    root["providers"] = YAML::Node(YAML::NodeType::Map);
    providers = root["providers"];
  } else if (!providers.IsMap()) {
    throw std::runtime_error(file.string() + ":" + std::to_string(YamlReader::line_of(providers)) +
                             ": 'providers' must be a mapping (fix or remove the file, then log in again)");
  }
  YAML::Node entry = providers[provider_id];
  if (!entry.IsMap()) {
    providers[provider_id] = YAML::Node(YAML::NodeType::Map);
    entry = providers[provider_id];
  }
  entry["api_key"] = api_key;

  YAML::Emitter emitter;
  emitter << root;
  if (!emitter.good()) throw std::runtime_error("cannot write " + file.string() + ": " + emitter.GetLastError());
  support::write_file_atomically(file, std::string(kHeader) + emitter.c_str() + "\n", 0600);
}

bool forget_api_keys(const fs::path& config_root) {
  const fs::path file = credentials_file(config_root);
  std::error_code ec;
  const bool removed = fs::remove(file, ec);
  if (ec) throw std::runtime_error("cannot remove " + file.string() + ": " + ec.message());
  return removed;
}

}  // namespace runtime::config
