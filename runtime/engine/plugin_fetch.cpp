// Getting a plugin's files for `plugin install` and `plugin update`: git clone or a local folder,
// the copy into the plugins folder, and the install record.
#include "runtime/engine/plugin_fetch.hpp"

#include <yaml-cpp/yaml.h>

#include "bridge/process/child_process.hpp"
#include "runtime/engine/loaders.hpp"
#include "runtime/engine/paths.hpp"
#include "support/file_io.hpp"
#include "support/text.hpp"

namespace runtime::engine::detail {

namespace {

// Runs git through the one child-process runner: its own process group, killed with everything
// it started when it outlasts `git.timeout`; stdin is empty and terminal prompts are off, so a
// source that asks for a password fails instead of waiting.
bridge::process::ProcessResult run_git(const GitOptions& git, std::vector<std::string> args, const fs::path& cwd) {
  bridge::process::ProcessSpec spec;
  spec.argv.push_back(git.program);
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd.string();
  spec.env_overlay = {{"GIT_TERMINAL_PROMPT", "0"}};
  spec.timeout = git.timeout;
  return bridge::process::run_process(spec);
}

// Why a git command failed, in one line's worth of words.
std::string git_failure(const GitOptions& git, const bridge::process::ProcessResult& r) {
  if (r.timed_out)
    return "timed out after " + std::to_string(git.timeout.count()) + " ms (its processes were stopped)";
  std::string out = support::trim(r.stderr_data + r.stdout_data);
  if (r.term_signal) return "killed by signal " + std::to_string(*r.term_signal) + (out.empty() ? "" : ": " + out);
  return out;
}

std::string install_record_yaml(const InstallRecord& r) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << r.source;
  e << YAML::Key << "ref" << YAML::Value << YAML::DoubleQuoted << r.ref;
  e << YAML::Key << "path" << YAML::Value << YAML::DoubleQuoted << r.path;
  e << YAML::Key << "commit" << YAML::Value << YAML::DoubleQuoted << r.commit;
  e << YAML::EndMap;
  return "# Written by `openvaala plugin install`; `openvaala plugin update` reads it. Do not edit.\n" +
         std::string(e.c_str()) + "\n";
}

}  // namespace

Staging::~Staging() {
  std::error_code ec;
  if (!dir.empty()) fs::remove_all(dir, ec);
}

bool looks_like_git_url(const std::string& s) {
  return s.find("://") != std::string::npos || s.rfind("git@", 0) == 0 || (s.size() > 4 && s.ends_with(".git"));
}

std::string fallback_name(const std::string& source, const std::string& path) {
  std::string base = path.empty() ? source : path;
  while (!base.empty() && (base.back() == '/' || base.back() == '\\')) base.pop_back();
  auto slash = base.find_last_of("/:");
  if (slash != std::string::npos) base = base.substr(slash + 1);
  if (base.ends_with(".git")) base.resize(base.size() - 4);
  return base;
}

std::optional<fs::path> fetch_source(const InstallRecord& rec, const fs::path& staging, const GitOptions& git,
                                     InstallRecord& out, std::string& error) {
  out = rec;
  std::error_code ec;
  bool local_dir = fs::is_directory(rec.source, ec) && !looks_like_git_url(rec.source);
  bool use_git = !local_dir || !rec.ref.empty();
  fs::path base;
  if (use_git) {
    if (local_dir && !fs::exists(fs::path(rec.source) / ".git", ec)) {
      error = "--ref works only with git sources, and " + rec.source + " is a folder that is not a git repository";
      return std::nullopt;
    }
    base = staging / "clone";
    std::vector<std::string> args = {"clone", "--quiet"};
    if (!rec.ref.empty()) {
      args.push_back("--branch");
      args.push_back(rec.ref);
    }
    args.push_back("--");
    args.push_back(rec.source);
    args.push_back(base.string());
    auto clone = run_git(git, args, staging);
    if (!clone.started) {
      error = "installing from git needs " + git.program + ", which could not be started: " + clone.spawn_error;
      return std::nullopt;
    }
    if (clone.exit_code != 0) {
      error = "git clone " + rec.source + (rec.ref.empty() ? "" : " (ref " + rec.ref + ")") +
              " failed: " + git_failure(git, clone);
      return std::nullopt;
    }
    auto head = run_git(git, {"-C", base.string(), "rev-parse", "HEAD"}, staging);
    if (head.exit_code == 0) out.commit = support::trim(head.stdout_data);
    if (local_dir) out.source = fs::absolute(rec.source).lexically_normal().string();
  } else {
    base = fs::absolute(rec.source).lexically_normal();
    out.source = base.string();
    out.commit.clear();
  }
  fs::path dir = base;
  if (!rec.path.empty()) {
    if (fs::path(rec.path).is_absolute() || !path_within(base, (base / rec.path).lexically_normal())) {
      error = "--path " + rec.path + " must be a relative path inside the source";
      return std::nullopt;
    }
    dir = (base / rec.path).lexically_normal();
  }
  if (!fs::is_directory(dir, ec)) {
    error = "no folder " + (rec.path.empty() ? rec.source : rec.path + " in " + rec.source);
    return std::nullopt;
  }
  if (!detect_manifest(dir)) {
    error = "no plugin manifest in " + (rec.path.empty() ? rec.source : rec.source + " --path " + rec.path) +
            " (expected .openvaala-plugin/plugin.yaml, .codex-plugin/plugin.json, .claude-plugin/plugin.json or an "
            "Agent Plugins plugin.json)";
    return std::nullopt;
  }
  return dir;
}

std::string plugin_name_of(const fs::path& dir, const std::string& fallback) {
  std::string n = plugin_declared_name(dir);
  if (n == dir.filename().string()) {
    // No name in the manifest (or it equals the staging folder's name): use the source's name.
    auto m = detect_manifest(dir);
    if (m && m->first == PluginInfo::Format::OpenVaala) return n;
    return fallback;
  }
  return n;
}

bool copy_plugin_tree(const fs::path& from, const fs::path& to, std::string& error) {
  std::error_code ec;
  fs::create_directories(to, ec);
  if (ec) {
    error = "cannot create " + to.string() + ": " + ec.message();
    return false;
  }
  for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name == ".git" || name == ".openvaala-install.yaml") continue;
    std::error_code e2;
    fs::copy(it->path(), to / name,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing, e2);
    if (e2) {
      error = "cannot copy " + it->path().string() + ": " + e2.message();
      return false;
    }
  }
  if (ec) {
    error = "cannot read " + from.string() + ": " + ec.message();
    return false;
  }
  return true;
}

bool write_install_record(const fs::path& plugin_dir, const InstallRecord& record, std::string& error) {
  try {
    support::write_file_atomically(plugin_dir / ".openvaala-install.yaml", install_record_yaml(record), 0644);
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

std::string describe_source(const PluginInfo& p) {
  if (p.install) {
    std::string s = p.install->source;
    if (!p.install->ref.empty()) s += " @" + p.install->ref;
    if (!p.install->path.empty()) s += " --path " + p.install->path;
    if (!p.install->commit.empty()) s += " (" + p.install->commit.substr(0, 12) + ")";
    return s;
  }
  std::error_code ec;
  if (fs::is_symlink(p.root, ec)) return "link to " + fs::read_symlink(p.root, ec).string();
  return "copied into " + p.root.string();
}

}  // namespace runtime::engine::detail
