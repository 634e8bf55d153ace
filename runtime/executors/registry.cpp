#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "runtime/executors/executors.hpp"

namespace runtime::executors {

struct Registry::Entry {
  config::ExecutorConfig config;
  std::shared_ptr<Executor> executor;
};

namespace {
// A configuration as compared on reload: same text, same connection.
std::string fingerprint(const config::ExecutorConfig& c) {
  std::string s = c.id + '\n' + config::executor_type_name(c.type) + '\n' + c.host + '\n' + c.user.value_or("") + '\n' +
                  std::to_string(c.port.value_or(0)) + '\n' + (c.identity_file ? c.identity_file->string() : "") + '\n' +
                  c.workdir + '\n' + c.root.string() + '\n' + (c.read_only ? "ro" : "rw") + '\n' + c.engine + '\n' +
                  c.container + '\n' + c.image + '\n' + c.folder.string() + '\n' + (c.helper ? "helper" : "no helper");
  for (const auto& m : c.mount_args) s += '\n' + m;
  for (const auto& o : c.ssh_options) s += '\n' + o;
  for (const auto& [k, v] : c.env) s += '\n' + k + '=' + v;
  return s;
}
}  // namespace

Registry::Registry(Deps deps, fs::path builtin_skills_dir)
    : deps_(std::move(deps)), builtin_skills_dir_(std::move(builtin_skills_dir)) {
  openvaala_ = make_virtual_executor(deps_, config::kOpenvaalaExecutor, "builtin", builtin_skills_dir_, "/skills", true);
}

Registry::~Registry() { shutdown(); }

void Registry::configure(const std::map<std::string, config::ExecutorConfig>& configs) {
  std::lock_guard lock(mu_);
  std::map<std::string, std::shared_ptr<Entry>> next;
  for (const auto& [id, c] : configs) {
    if (auto it = entries_.find(id); it != entries_.end() && fingerprint(it->second->config) == fingerprint(c)) {
      next[id] = it->second;
      continue;
    }
    auto e = std::make_shared<Entry>();
    e->config = c;
    if (c.type == config::ExecutorConfig::Type::Ssh) {
      if (control_dir_.empty()) {
        // Private to this process and user: the sockets give a shell on the remote host.
        std::string tmpl = "/tmp/openvaala-ssh-" + std::to_string(::getuid()) + "-XXXXXX";
        if (char* d = ::mkdtemp(tmpl.data())) control_dir_ = d;
        else spdlog::error("cannot create the folder for ssh connections: {}", std::strerror(errno));
      }
      e->executor = make_ssh_executor(deps_, c, control_dir_);
    } else if (c.type == config::ExecutorConfig::Type::Container || c.type == config::ExecutorConfig::Type::Devcontainer) {
      e->executor = make_container_executor(deps_, c);
    } else {
      e->executor = make_virtual_executor(deps_, c.id, "virtual", c.root, "", c.read_only);
    }
    next[id] = std::move(e);
  }
  for (auto& [id, e] : entries_)
    if (!next.count(id) || next[id] != e) retired_.push_back(e->executor);
  entries_ = std::move(next);
}

std::shared_ptr<Executor> Registry::find(const std::string& id, const fs::path& cwd) const {
  if (id == config::kLocalExecutor) return make_local_executor(deps_, cwd);
  if (id == config::kOpenvaalaExecutor) return openvaala_;
  std::lock_guard lock(mu_);
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second->executor;
}

std::shared_ptr<Executor> Registry::use(const std::string& id, const fs::path& cwd, const std::string& session) {
  auto ex = find(id, cwd);
  if (ex && id != config::kLocalExecutor && id != config::kOpenvaalaExecutor) {
    std::lock_guard lock(mu_);
    users_[id].insert(session);
  }
  return ex;
}

std::vector<std::shared_ptr<Executor>> Registry::session_ended(const std::string& session) {
  std::vector<std::shared_ptr<Executor>> unused;
  std::lock_guard lock(mu_);
  for (auto it = users_.begin(); it != users_.end();) {
    if (it->second.erase(session) && it->second.empty()) {
      if (auto e = entries_.find(it->first); e != entries_.end()) unused.push_back(e->second->executor);
      it = users_.erase(it);
    } else {
      ++it;
    }
  }
  return unused;
}

std::vector<std::string> Registry::ids() const {
  std::vector<std::string> out{config::kLocalExecutor, config::kOpenvaalaExecutor};
  std::lock_guard lock(mu_);
  for (const auto& [id, _] : entries_) out.push_back(id);
  return out;
}

void Registry::shutdown() {
  std::vector<std::shared_ptr<Executor>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& [_, e] : entries_) all.push_back(e->executor);
    all.insert(all.end(), retired_.begin(), retired_.end());
    retired_.clear();
  }
  for (auto& e : all) e->shutdown();
  if (!control_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(control_dir_, ec);
  }
}

}  // namespace runtime::executors
