// executors/<id>.yaml of type container and devcontainer (container_config.hpp).
//
// `type: devcontainer` reads a folder's dev container definition as the Dev Containers spec
// (containers.dev) does, for image mode: image, workspaceFolder, workspaceMount, remoteUser (else
// containerUser), containerEnv and remoteEnv, mounts, with the ${localWorkspaceFolder},
// ${localWorkspaceFolderBasename}, ${containerWorkspaceFolder} and ${localEnv:NAME[:default]}
// variables. `build` and compose files need a builder we do not run: an error says so.
#include "runtime/engine/container_config.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "runtime/engine/paths.hpp"
#include "support/file_io.hpp"

namespace runtime::engine::detail {

using config::ExecutorConfig;
namespace json = boost::json;

namespace {

bool is_env_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// A name the engine will take as one argument, never as one of its flags.
bool is_engine_word(const std::string& s) { return !s.empty() && s[0] != '-'; }

void read_engine(config::YamlReader& r, const YAML::Node& root, ExecutorConfig& x) {
  auto engine = r.string(root, "engine");
  if (engine && *engine != "podman" && *engine != "docker")
    r.error(root["engine"], "'engine' must be podman or docker, not '" + *engine + "'");
  else x.engine = engine.value_or("");
}

void read_env(config::YamlReader& r, const YAML::Node& root, ExecutorConfig& x) {
  bool ok = true;
  if (auto env = r.string_map(root, "env", ok))
    for (auto& [k, v] : *env) {
      if (!is_env_name(k)) r.error(root["env"], "'env' key '" + k + "' is not a variable name");
      else x.env.emplace_back(k, v);
    }
}

void read_user_workdir_env(config::YamlReader& r, const YAML::Node& root, ExecutorConfig& x) {
  x.user = r.string(root, "user");
  if (x.user && !is_engine_word(*x.user)) r.error(root["user"], "'user' must be a user name or uid");
  x.workdir = r.string(root, "workdir").value_or("");
  read_env(r, root, x);
}

// "host:container[:options]", the host side absolute or starting with ~/.
void read_mounts(config::YamlReader& r, const YAML::Node& root, ExecutorConfig& x, const fs::path& home) {
  auto mounts = r.string_list(root, "mounts");
  if (!mounts) return;
  std::size_t i = 0;
  for (const auto& m : *mounts) {
    const auto& at = root["mounts"][i++];
    const auto colon = m.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 >= m.size() || m[colon + 1] != '/') {
      r.error(at, "each mount must be 'host-path:container-path' (the container path absolute), got '" + m + "'");
      continue;
    }
    const fs::path host = expand_home(m.substr(0, colon), home);
    if (!host.is_absolute()) {
      r.error(at, "the host side of mount '" + m + "' must be absolute or start with ~/");
      continue;
    }
    x.mount_args.insert(x.mount_args.end(), {"-v", host.string() + m.substr(colon)});
  }
}

struct Vars {
  std::string local_folder;
  std::string container_folder;
};

// One ${...} variable's value; nullopt for one we do not know.
std::optional<std::string> variable(const std::string& name, const Vars& v) {
  if (name == "localWorkspaceFolder") return v.local_folder;
  if (name == "localWorkspaceFolderBasename") return fs::path(v.local_folder).filename().string();
  if (name == "containerWorkspaceFolder") return v.container_folder;
  if (name == "containerWorkspaceFolderBasename") return fs::path(v.container_folder).filename().string();
  if (name.rfind("localEnv:", 0) == 0) {
    const std::string rest = name.substr(9);
    const auto colon = rest.find(':');
    const char* value = std::getenv(rest.substr(0, colon).c_str());
    if (value) return std::string(value);
    return colon == std::string::npos ? std::string() : rest.substr(colon + 1);
  }
  return std::nullopt;
}

// `s` with its variables replaced; `unknown` names the first one we do not know.
std::string substitute(const std::string& s, const Vars& v, std::string& unknown) {
  std::string out;
  for (std::size_t at = 0;;) {
    const auto open = s.find("${", at);
    const auto close = open == std::string::npos ? open : s.find('}', open);
    if (close == std::string::npos) return out + s.substr(at);
    const std::string name = s.substr(open + 2, close - open - 2);
    auto value = variable(name, v);
    if (!value && unknown.empty()) unknown = name;
    out += s.substr(at, open - at) + value.value_or("");
    at = close + 1;
  }
}

// The 1-based line of byte `offset` in `text`.
int line_at(const std::string& text, std::size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(std::min(offset, text.size())), '\n'));
}

// devcontainer.json parsed (comments and trailing commas allowed, as VS Code writes it); nullopt
// with a diagnostic at the line of the first problem.
struct Definition {
  std::string text;
  json::object object;
};

std::optional<Definition> parse_definition(const fs::path& file, config::Diagnostics& diags) {
  auto report = [&](int line, const std::string& m) { diags.push_back({config::Diagnostic::Severity::Error, file.string(), line, m}); };
  auto read = support::read_file(file);
  if (!read) {
    report(0, "cannot read it");
    return std::nullopt;
  }
  std::string text = std::move(*read);
  json::parse_options options;
  options.allow_comments = true;
  options.allow_trailing_commas = true;
  json::stream_parser p({}, options);
  boost::system::error_code ec;
  const std::size_t used = p.write_some(text.data(), text.size(), ec);
  if (!ec) p.finish(ec);
  if (ec) {
    report(line_at(text, used), "not valid JSON: " + ec.message());
    return std::nullopt;
  }
  json::value v = p.release();
  if (!v.is_object()) {
    report(1, "a dev container definition is a JSON object");
    return std::nullopt;
  }
  return Definition{std::move(text), std::move(v.as_object())};
}

// The line where `needle` first appears, else 0 (the whole file).
int line_of(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  return at == std::string::npos ? 0 : line_at(text, at);
}

std::string string_at(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

// A mount of `mounts`: "source=…,target=…,type=bind" or {source, target, type}, as --mount takes it.
std::optional<std::string> mount_value(const json::value& m, const Vars& vars, std::string& unknown) {
  if (m.is_string()) return substitute(std::string(m.as_string()), vars, unknown);
  if (!m.is_object()) return std::nullopt;
  const auto& o = m.as_object();
  const std::string source = string_at(o, "source"), target = string_at(o, "target"), type = string_at(o, "type");
  if (target.empty() || type.empty()) return std::nullopt;
  return substitute("type=" + type + (source.empty() ? "" : ",source=" + source) + ",target=" + target, vars, unknown);
}

struct Problem {
  std::string needle;  // where in the file: the quoted key at fault, or the variable
  std::string message;
};

// What the definition says, into `x`; the first problem, if any.
std::optional<Problem> apply_definition(const json::object& d, const fs::path& folder, ExecutorConfig& x) {
  for (const char* k : {"build", "dockerFile", "dockerfile", "dockerComposeFile"})
    if (d.contains(k))
      return Problem{std::string("\"") + k + "\"", std::string("'") + k + "' needs a builder openvaala does not run: build the image, then name it in 'image'"};
  x.image = string_at(d, "image");
  if (x.image.empty() || !is_engine_word(x.image)) return Problem{"\"image\"", "it needs 'image', the name of the image to start"};
  Vars vars{folder.string(), ""};
  std::string unknown;
  const std::string wf = string_at(d, "workspaceFolder");
  vars.container_folder = wf.empty() ? "/workspaces/" + folder.filename().string() : substitute(wf, vars, unknown);
  x.workdir = vars.container_folder;
  const std::string wm = string_at(d, "workspaceMount");
  x.mount_args = {"--mount", wm.empty() ? "type=bind,source=" + vars.local_folder + ",target=" + vars.container_folder
                                        : substitute(wm, vars, unknown)};
  if (const auto* mounts = d.if_contains("mounts"); mounts && mounts->is_array())
    for (const auto& m : mounts->as_array()) {
      auto value = mount_value(m, vars, unknown);
      if (!value) return Problem{"\"mounts\"", "each mount is \"source=…,target=…,type=bind\" or an object with target and type"};
      x.mount_args.insert(x.mount_args.end(), {"--mount", *value});
    }
  std::string user = string_at(d, "remoteUser");
  if (user.empty()) user = string_at(d, "containerUser");
  if (!user.empty()) x.user = user;
  for (const char* key : {"containerEnv", "remoteEnv"})
    if (const auto* env = d.if_contains(key); env && env->is_object())
      for (const auto& [k, v] : env->as_object())
        if (v.is_string() && is_env_name(std::string(k))) x.env.emplace_back(std::string(k), substitute(std::string(v.as_string()), vars, unknown));
  if (!unknown.empty())
    return Problem{"${" + unknown + "}", "the variable ${" + unknown + "} is not one openvaala knows (localWorkspaceFolder, "
                                        "localWorkspaceFolderBasename, containerWorkspaceFolder, localEnv:NAME)"};
  return std::nullopt;
}

}  // namespace

void read_container(config::YamlReader& r, const YAML::Node& root, ExecutorConfig& x, const fs::path& home) {
  for (const char* k : {"host", "port", "identity_file", "ssh_options", "root", "read_only", "folder"})
    if (root[k]) r.error(root[k], std::string("'") + k + "' is not a container executor's (container, image, mounts, workdir, user, env)");
  read_engine(r, root, x);
  x.container = r.string(root, "container").value_or("");
  x.image = r.string(root, "image").value_or("");
  if (root["container"] && root["image"])
    r.error(root["image"], "a container executor takes 'container' (a running one) or 'image' (one started for it), not both");
  else if (!root["container"] && !root["image"])
    r.error_line(0, "a container executor needs 'container' (a running container's name) or 'image' (to start one from)");
  else if (root["container"] && !is_engine_word(x.container)) r.error(root["container"], "'container' must be a container's name or id");
  else if (root["image"] && !is_engine_word(x.image)) r.error(root["image"], "'image' must be an image name");
  if (root["mounts"] && root["container"]) r.error(root["mounts"], "'mounts' is for image mode: a running container has its own");
  else read_mounts(r, root, x, home);
  read_user_workdir_env(r, root, x);
}

}  // namespace runtime::engine::detail

namespace runtime::engine::detail {

void read_devcontainer(config::YamlReader& r, const YAML::Node& root, ExecutorConfig& x, const fs::path& home,
                       config::Diagnostics& diags) {
  for (const char* k : {"host", "port", "identity_file", "ssh_options", "root", "read_only", "container", "image", "mounts",
                        "workdir", "user"})
    if (root[k]) r.error(root[k], std::string("'") + k + "' comes from devcontainer.json (a devcontainer executor takes folder, engine, env)");
  read_engine(r, root, x);
  auto folder = r.string(root, "folder");
  if (!root["folder"]) return r.error_line(0, "a devcontainer executor needs 'folder' (the project folder with .devcontainer/devcontainer.json)");
  if (!folder) return;
  x.folder = expand_home(*folder, home);
  if (!x.folder.is_absolute()) return r.error(root["folder"], "'folder' must be an absolute path or start with ~/");
  fs::path file = x.folder / ".devcontainer" / "devcontainer.json";
  std::error_code ec;
  if (!fs::is_regular_file(file, ec) && fs::is_regular_file(x.folder / ".devcontainer.json", ec)) file = x.folder / ".devcontainer.json";
  if (!fs::is_regular_file(file, ec))
    return r.error(root["folder"], "'folder' " + x.folder.string() + " has no .devcontainer/devcontainer.json");
  auto d = parse_definition(file, diags);
  if (!d) return;
  if (auto problem = apply_definition(d->object, x.folder, x))
    diags.push_back({config::Diagnostic::Severity::Error, file.string(), line_of(d->text, problem->needle), problem->message});
  read_env(r, root, x);
}

}  // namespace runtime::engine::detail
