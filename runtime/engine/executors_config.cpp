// executors/<id>.yaml (DESIGN §10): validated like every other config file.
#include <algorithm>
#include <cctype>
#include <set>

#include "runtime/engine/container_config.hpp"
#include "runtime/engine/loaders.hpp"
#include "runtime/engine/paths.hpp"

namespace runtime::engine::detail {

using config::ExecutorConfig;

namespace {

bool is_env_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// Options openvaala sets itself: a user value would break the one shared connection, or let ssh
// wait on a prompt nobody sees.
bool reserved_ssh_option(std::string key) {
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
  return key == "batchmode" || key == "controlmaster" || key == "controlpath" || key == "controlpersist";
}

// The keyword of an `ssh -o` option as ssh reads it (readconf.c): blanks before it skipped, a
// quoted keyword without its quotes, the keyword ending at a blank or '=' ("BatchMode=no",
// " BatchMode =no", "batchmode\tno" all set BatchMode). Empty when no value follows it.
std::string ssh_option_keyword(std::string_view o) {
  constexpr std::string_view kBlank = " \t\r\n";
  const auto start = o.find_first_not_of(kBlank);
  if (start == std::string_view::npos) return {};
  o.remove_prefix(start);
  std::size_t end = 0;
  std::string keyword;
  if (o.front() == '"') {
    end = o.find('"', 1);
    if (end == std::string_view::npos) return {};
    keyword = std::string(o.substr(1, end - 1));
    ++end;
  } else {
    end = std::min(o.find_first_of(" \t\r\n="), o.size());
    keyword = std::string(o.substr(0, end));
  }
  const auto rest = o.substr(end);
  if (keyword.empty() || rest.empty() || (kBlank.find(rest.front()) == std::string_view::npos && rest.front() != '=')) return {};
  return keyword;
}

void read_ssh(config::YamlReader& r, const YAML::Node& root, ExecutorConfig& x, const fs::path& home) {
  for (const char* k : {"root", "read_only"})
    if (root[k]) r.error(root[k], std::string("'") + k + "' is for virtual executors, not ssh");
  for (const char* k : {"engine", "container", "image", "mounts", "folder"})
    if (root[k]) r.error(root[k], std::string("'") + k + "' is for container executors, not ssh");
  auto host = r.string(root, "host");
  if (!root["host"]) r.error_line(0, "an ssh executor needs 'host' (a host name or an alias from ~/.ssh/config)");
  else if (host && host->empty()) r.error(root["host"], "'host' must not be empty");
  else if (host && (*host)[0] == '-') r.error(root["host"], "'host' must not start with '-'");
  x.host = host.value_or("");
  x.user = r.string(root, "user");
  if (x.user && (x.user->empty() || (*x.user)[0] == '-')) r.error(root["user"], "'user' must be a user name");
  if (root["port"] && !root["port"].IsNull()) {
    int port = 0;
    if (!root["port"].IsScalar() || !YAML::convert<int>::decode(root["port"], port) || port < 1 || port > 65535)
      r.error(root["port"], "'port' must be a port number (1-65535)");
    else x.port = port;
  }
  if (auto id = r.string(root, "identity_file")) x.identity_file = expand_home(*id, home);
  if (auto opts = r.string_list(root, "ssh_options")) {
    std::size_t i = 0;
    for (const auto& o : *opts) {
      const auto& at = root["ssh_options"][i++];
      const std::string keyword = ssh_option_keyword(o);
      if (keyword.empty()) {
        r.error(at, "each ssh_options entry must be 'Option=value' (as ssh -o takes it), got '" + o + "'");
        continue;
      }
      if (reserved_ssh_option(keyword)) {
        r.error(at, "'" + keyword + "' is set by openvaala (BatchMode and one shared connection per executor)");
        continue;
      }
      x.ssh_options.push_back(o);
    }
  }
  x.workdir = r.string(root, "workdir").value_or("");
  bool ok = true;
  if (auto env = r.string_map(root, "env", ok)) {
    for (auto& [k, v] : *env) {
      if (!is_env_name(k)) r.error(root["env"], "'env' key '" + k + "' is not a variable name");
      else x.env.emplace_back(k, v);
    }
  }
}

void read_virtual(config::YamlReader& r, const YAML::Node& root, ExecutorConfig& x, const fs::path& home) {
  for (const char* k : {"host", "user", "port", "identity_file", "ssh_options", "workdir", "env", "engine", "container", "image",
                        "mounts", "folder", "helper"})
    if (root[k]) r.error(root[k], std::string("'") + k + "' is for executors that run commands, not virtual ones (they run nothing)");
  auto root_dir = r.string(root, "root");
  if (!root["root"]) r.error_line(0, "a virtual executor needs 'root' (a local folder, seen as / on it)");
  else if (root_dir) {
    x.root = expand_home(*root_dir, home);
    if (!x.root.is_absolute()) r.error(root["root"], "'root' must be an absolute path or start with ~/");
    else if (!is_dir(x.root)) r.error(root["root"], "'root' " + x.root.string() + " is not a folder");
  }
  x.read_only = r.boolean(root, "read_only").value_or(false);
}

}  // namespace

bool is_executor_id(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; });
}

std::map<std::string, ExecutorConfig> load_executor_files(const fs::path& config_root, const fs::path& home,
                                                          Diagnostics& diags) {
  std::map<std::string, ExecutorConfig> out;
  for (const auto& f : yaml_files_in(config_root / "executors")) {
    config::YamlReader r(f, diags);
    auto root = r.load();
    if (!root) continue;
    const auto before = diags.size();
    ExecutorConfig x;
    x.file = f;
    x.id = f.stem().string();
    if (!is_executor_id(x.id))
      r.error_line(0, "the executor id '" + x.id + "' (the file name) is invalid: use letters, digits, - and _");
    else if (x.id == config::kLocalExecutor || x.id == config::kOpenvaalaExecutor)
      r.error_line(0, "'" + x.id + "' is a built-in executor and cannot be redefined (rename the file)");
    if (root->IsNull()) {
      r.error_line(0, "an executor file needs at least 'type' (ssh, container, devcontainer or virtual)");
      continue;
    }
    if (!r.expect_map(*root, "an executor file")) continue;
    r.check_keys(*root, {"id", "type", "host", "user", "port", "identity_file", "ssh_options", "workdir", "env", "root", "read_only",
                         "engine", "container", "image", "mounts", "folder", "helper"},
                 "an executor file");
    if (auto id = r.string(*root, "id"); id && *id != x.id)
      r.error((*root)["id"], "id '" + *id + "' does not match the file name '" + x.id + ".yaml'");
    auto type = r.string(*root, "type");
    if (!(*root)["type"]) r.error_line(0, "an executor file needs 'type' (ssh, container, devcontainer or virtual)");
    else if (type == "ssh") {
      x.type = ExecutorConfig::Type::Ssh;
      read_ssh(r, *root, x, home);
    } else if (type == "virtual") {
      x.type = ExecutorConfig::Type::Virtual;
      read_virtual(r, *root, x, home);
    } else if (type == "container") {
      x.type = ExecutorConfig::Type::Container;
      read_container(r, *root, x, home);
    } else if (type == "devcontainer") {
      x.type = ExecutorConfig::Type::Devcontainer;
      read_devcontainer(r, *root, x, home, diags);
    } else if (type) {
      r.error((*root)["type"], "'type' must be ssh, container, devcontainer or virtual, not '" + *type +
                                   "' (local and openvaala are built in)");
    }
    if (x.type != ExecutorConfig::Type::Virtual) x.helper = r.boolean(*root, "helper").value_or(true);
    if (config::has_errors(Diagnostics(diags.begin() + static_cast<long>(before), diags.end()))) continue;
    out[x.id] = std::move(x);
  }
  return out;
}

}  // namespace runtime::engine::detail

namespace runtime::config {
const char* executor_type_name(ExecutorConfig::Type t) {
  switch (t) {
    case ExecutorConfig::Type::Ssh: return "ssh";
    case ExecutorConfig::Type::Virtual: return "virtual";
    case ExecutorConfig::Type::Builtin: return "builtin";
    case ExecutorConfig::Type::Container: return "container";
    case ExecutorConfig::Type::Devcontainer: return "devcontainer";
    default: return "local";
  }
}
}  // namespace runtime::config
