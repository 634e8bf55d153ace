#include "support/json_read.hpp"

namespace support {

namespace json = boost::json;

std::string_view str_or(const json::value* v, std::string_view fallback) {
  if (v && v->is_string()) return v->as_string();
  return fallback;
}

std::string_view str_at(const json::object& o, std::string_view key, std::string_view fallback) {
  return str_or(o.if_contains(key), fallback);
}

const json::object* obj_at(const json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  return v && v->is_object() ? &v->as_object() : nullptr;
}

const json::array* arr_at(const json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  return v && v->is_array() ? &v->as_array() : nullptr;
}

std::optional<std::int64_t> int_at(const json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  if (!v) return std::nullopt;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<std::int64_t>(v->as_uint64());
  if (v->is_double()) return static_cast<std::int64_t>(v->as_double());
  return std::nullopt;
}

bool bool_at(const json::object& o, std::string_view key, bool fallback) {
  auto* v = o.if_contains(key);
  return v && v->is_bool() ? v->as_bool() : fallback;
}

}  // namespace support
