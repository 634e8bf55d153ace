#pragma once
// Helpers for reading YAML config files with diagnostics that carry the file and line.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/config/diagnostic.hpp"

namespace runtime::config {

class YamlReader {
 public:
  YamlReader(std::filesystem::path file, Diagnostics& diags) : file_(std::move(file)), diags_(diags) {}

  // Parses the file; nullopt (with a diagnostic) when it cannot be read or parsed.
  std::optional<YAML::Node> load();
  std::optional<YAML::Node> load_string(const std::string& text, int line_offset = 0);

  void error(const YAML::Node& at, const std::string& message);
  void error_line(int line, const std::string& message);
  void warning(const YAML::Node& at, const std::string& message);

  // Type-checked reads: on a wrong type an error names the key and what is allowed.
  std::optional<std::string> string(const YAML::Node& map, const char* key);
  std::optional<int> positive_int(const YAML::Node& map, const char* key);
  std::optional<bool> boolean(const YAML::Node& map, const char* key);
  std::optional<std::vector<std::string>> string_list(const YAML::Node& map, const char* key);
  // A mapping of names to string values; clears `ok` on a problem.
  std::optional<std::map<std::string, std::string>> string_map(const YAML::Node& map, const char* key, bool& ok);
  bool expect_map(const YAML::Node& node, const std::string& what);
  // Reports every key of `map` not in `allowed`.
  void check_keys(const YAML::Node& map, std::initializer_list<const char*> allowed, const std::string& what);

  const std::filesystem::path& file() const { return file_; }
  static int line_of(const YAML::Node& n) { return n.Mark().is_null() ? 0 : n.Mark().line + 1 + 0; }

 private:
  std::filesystem::path file_;
  Diagnostics& diags_;
  int line_offset_ = 0;
};

}  // namespace runtime::config
