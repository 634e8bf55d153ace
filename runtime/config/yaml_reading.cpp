#include "runtime/config/yaml_reading.hpp"

#include <fstream>
#include <sstream>

namespace runtime::config {

std::optional<YAML::Node> YamlReader::load() {
  std::ifstream in(file_, std::ios::binary);
  if (!in) {
    diags_.push_back({Diagnostic::Severity::Error, file_.string(), 0, "cannot be read"});
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return load_string(ss.str());
}

std::optional<YAML::Node> YamlReader::load_string(const std::string& text, int line_offset) {
  line_offset_ = line_offset;
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    diags_.push_back({Diagnostic::Severity::Error, file_.string(), e.mark.line + 1 + line_offset_,
                      "invalid YAML: " + e.msg});
  } catch (const YAML::Exception& e) {
    diags_.push_back({Diagnostic::Severity::Error, file_.string(), line_offset_ + 1, std::string("invalid YAML: ") + e.what()});
  }
  return std::nullopt;
}

void YamlReader::error(const YAML::Node& at, const std::string& message) {
  diags_.push_back({Diagnostic::Severity::Error, file_.string(), line_of(at) + line_offset_, message});
}

void YamlReader::error_line(int line, const std::string& message) {
  diags_.push_back({Diagnostic::Severity::Error, file_.string(), line, message});
}

void YamlReader::warning(const YAML::Node& at, const std::string& message) {
  diags_.push_back({Diagnostic::Severity::Warning, file_.string(), line_of(at) + line_offset_, message});
}

bool YamlReader::expect_map(const YAML::Node& node, const std::string& what) {
  if (node.IsMap()) return true;
  error(node, what + " must be a mapping of keys to values");
  return false;
}

std::optional<std::string> YamlReader::string(const YAML::Node& map, const char* key) {
  auto n = map[key];
  if (!n || n.IsNull()) return std::nullopt;
  if (!n.IsScalar()) {
    error(n, std::string("'") + key + "' must be a string");
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<int> YamlReader::positive_int(const YAML::Node& map, const char* key) {
  auto n = map[key];
  if (!n || n.IsNull()) return std::nullopt;
  int v = 0;
  if (!n.IsScalar() || !YAML::convert<int>::decode(n, v) || v <= 0) {
    error(n, std::string("'") + key + "' must be a positive whole number");
    return std::nullopt;
  }
  return v;
}

std::optional<bool> YamlReader::boolean(const YAML::Node& map, const char* key) {
  auto n = map[key];
  if (!n || n.IsNull()) return std::nullopt;
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
    error(n, std::string("'") + key + "' must be true or false");
    return std::nullopt;
  }
  return v;
}

std::optional<std::vector<std::string>> YamlReader::string_list(const YAML::Node& map, const char* key) {
  auto n = map[key];
  if (!n || n.IsNull()) return std::nullopt;
  if (!n.IsSequence()) {
    error(n, std::string("'") + key + "' must be a list of strings");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const auto& item : n) {
    if (!item.IsScalar()) {
      error(item, std::string("every entry of '") + key + "' must be a string");
      return std::nullopt;
    }
    out.push_back(item.Scalar());
  }
  return out;
}

std::optional<std::map<std::string, std::string>> YamlReader::string_map(const YAML::Node& map, const char* key,
                                                                       bool& ok) {
  auto n = map[key];
  if (!n || n.IsNull()) return std::nullopt;
  if (!n.IsMap()) {
    error(n, std::string("'") + key + "' must be a mapping of names to string values");
    ok = false;
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  for (const auto& kv : n) {
    if (!kv.second.IsScalar()) {
      error(kv.second, std::string("'") + key + "." + kv.first.as<std::string>("") + "' must be a string");
      ok = false;
      continue;
    }
    out[kv.first.as<std::string>("")] = kv.second.Scalar();
  }
  return out;
}

void YamlReader::check_keys(const YAML::Node& map, std::initializer_list<const char*> allowed, const std::string& what) {
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>("");
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (!ok) {
      std::string list;
      for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
      error(kv.first, "unknown key '" + key + "' in " + what + " (allowed: " + list + ")");
    }
  }
}

}  // namespace runtime::config
