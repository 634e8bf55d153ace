#pragma once
// Helpers for the engine tests: a temporary tree with a config root, a home and a project.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "runtime/engine/engine.hpp"

namespace engine_test {

namespace fs = std::filesystem;

class Tree {
 public:
  Tree() {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("ov-engine-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(root_);
    root_ = fs::canonical(root_);
    fs::create_directories(config());
    fs::create_directories(home());
    fs::create_directories(project());
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  fs::path root() const { return root_; }
  fs::path config() const { return root_ / "config"; }
  fs::path home() const { return root_ / "home"; }
  fs::path project() const { return root_ / "project"; }
  fs::path p(const std::string& rel) const { return root_ / rel; }

  fs::path write(const std::string& rel, const std::string& text) const {
    fs::path f = root_ / rel;
    fs::create_directories(f.parent_path());
    std::ofstream o(f, std::ios::binary | std::ios::trunc);
    o << text;
    return f;
  }
  fs::path skill(const std::string& dir_rel, const std::string& name, const std::string& description) const {
    return write(dir_rel + "/SKILL.md", "---\nname: " + name + "\ndescription: " + description + "\n---\nBody of " +
                                            name + "\n");
  }
  void symlink(const std::string& target, const std::string& link_rel) const {
    fs::path l = root_ / link_rel;
    fs::create_directories(l.parent_path());
    fs::create_directory_symlink(target, l);
  }

  runtime::engine::Engine::Options options() const {
    runtime::engine::Engine::Options o;
    o.config_root = config();
    o.home = home();
    o.builtin_skills_dir = root_ / "cache" / "builtin-skills";
    o.plugin_data_root = root_ / "data" / "plugin-data";
    return o;
  }
  std::shared_ptr<const runtime::engine::Engine> load(runtime::config::Diagnostics& d) const {
    return runtime::engine::Engine::load(options(), d);
  }

 private:
  fs::path root_;
};

inline std::string join(const runtime::config::Diagnostics& d) {
  std::string s;
  for (const auto& x : d) s += x.to_string() + "\n";
  return s;
}

inline bool contains(const runtime::config::Diagnostics& d, const std::string& text) {
  for (const auto& x : d)
    if (x.to_string() == text) return true;
  return false;
}

}  // namespace engine_test
