#include "acp/schema/reader.hpp"

namespace acp::schema {

namespace json = boost::json;

void Reader::fail(std::string_view what) const {
  throw invalid_params((path_.empty() ? std::string("params") : path_) + " " + std::string(what));
}

const json::object& Reader::object() const {
  if (!v_->is_object()) fail("must be an object");
  return v_->as_object();
}

const json::array& Reader::array() const {
  if (!v_->is_array()) fail("must be an array");
  return v_->as_array();
}

std::string Reader::string() const {
  if (!v_->is_string()) fail("must be a string");
  return std::string(v_->as_string());
}

bool Reader::boolean() const {
  if (!v_->is_bool()) fail("must be a boolean");
  return v_->as_bool();
}

std::int64_t Reader::integer() const {
  if (v_->is_int64()) return v_->as_int64();
  if (v_->is_uint64() && v_->as_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) return static_cast<std::int64_t>(v_->as_uint64());
  fail("must be an integer");
}

std::optional<Reader> Reader::field(std::string_view key) const {
  // Null params read as an empty object: a method whose fields are all optional takes them.
  if (v_->is_null() && path_.empty()) return std::nullopt;
  const auto* v = object().if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  return Reader(*v, child(key));
}

Reader Reader::required(std::string_view key) const {
  auto f = field(key);
  if (!f) Reader(*v_, child(key)).fail("is required");
  return *f;
}

std::optional<json::object> Reader::lenient_object(std::string_view key) const {
  const auto* o = v_->if_object();
  const auto* v = o ? o->if_contains(key) : nullptr;
  if (!v || !v->is_object()) return std::nullopt;
  return v->as_object();
}

Reader Reader::at(std::size_t i) const {
  const auto& a = array();
  return Reader(a.at(i), (path_.empty() ? std::string("params") : path_) + "[" + std::to_string(i) + "]");
}

}  // namespace acp::schema
