#include "acp/params.hpp"

namespace acp {

namespace json = boost::json;

Params::Params(const json::value& v) : obj_(&empty()) {
  if (v.is_object()) {
    obj_ = &v.as_object();
  } else if (!v.is_null()) {
    throw invalid_params("params must be an object");
  }
}

const json::object& Params::empty() {
  static const json::object o;
  return o;
}

bool Params::has(std::string_view key) const {
  auto it = obj_->find(key);
  return it != obj_->end() && !it->value().is_null();
}

const json::value& Params::required(std::string_view key) const {
  auto it = obj_->find(key);
  if (it == obj_->end() || it->value().is_null())
    throw invalid_params("missing required field '" + std::string(key) + "'");
  return it->value();
}

std::string Params::required_string(std::string_view key) const {
  const auto& v = required(key);
  if (!v.is_string()) throw invalid_params("field '" + std::string(key) + "' must be a string");
  return std::string(v.as_string());
}

std::optional<std::string> Params::optional_string(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  const auto& v = obj_->at(key);
  if (!v.is_string()) throw invalid_params("field '" + std::string(key) + "' must be a string");
  return std::string(v.as_string());
}

std::optional<std::int64_t> Params::optional_int(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  const auto& v = obj_->at(key);
  if (v.is_int64()) return v.as_int64();
  if (v.is_uint64()) return static_cast<std::int64_t>(v.as_uint64());
  throw invalid_params("field '" + std::string(key) + "' must be an integer");
}

std::optional<bool> Params::optional_bool(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  const auto& v = obj_->at(key);
  if (!v.is_bool()) throw invalid_params("field '" + std::string(key) + "' must be a boolean");
  return v.as_bool();
}

const json::array& Params::required_array(std::string_view key) const {
  const auto& v = required(key);
  if (!v.is_array()) throw invalid_params("field '" + std::string(key) + "' must be an array");
  return v.as_array();
}

const json::array* Params::optional_array(std::string_view key) const {
  if (!has(key)) return nullptr;
  const auto& v = obj_->at(key);
  if (!v.is_array()) throw invalid_params("field '" + std::string(key) + "' must be an array");
  return &v.as_array();
}

const json::object* Params::optional_object(std::string_view key) const {
  if (!has(key)) return nullptr;
  const auto& v = obj_->at(key);
  if (!v.is_object()) throw invalid_params("field '" + std::string(key) + "' must be an object");
  return &v.as_object();
}

}  // namespace acp
