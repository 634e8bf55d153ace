#pragma once
// Decoding ACP params with errors that name the JSON path (clangd's ObjectMapper + json::Path):
// a Reader is a value and where it sits ("mcpServers[2].command"). A field that is wrong throws
// acp::RpcError -32602 "Invalid params: <path> <what is wrong>", so the client sees which entry
// to fix. Unknown fields are ignored (ACP's forward-compatibility rule); an absent optional field
// and a null one read the same. Encoding helpers omit absent fields (ACP's optional fields must
// not be null).
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acp/rpc_error.hpp"

namespace acp::schema {

class Reader {
 public:
  // The root: a request's params (named "params" in errors about the whole).
  explicit Reader(const boost::json::value& v) : v_(&v) {}
  Reader(const boost::json::value& v, std::string path) : v_(&v), path_(std::move(path)) {}

  const boost::json::value& value() const { return *v_; }
  const std::string& path() const { return path_; }
  // -32602 "Invalid params: <path> <what>".
  [[noreturn]] void fail(std::string_view what) const;

  const boost::json::object& object() const;  // "must be an object"
  const boost::json::array& array() const;    // "must be an array"
  std::string string() const;                 // "must be a string"
  bool boolean() const;                       // "must be a boolean"
  std::int64_t integer() const;               // "must be an integer"

  // The field `key` (present and not null), or nullopt. Requires this to be an object.
  std::optional<Reader> field(std::string_view key) const;
  Reader required(std::string_view key) const;  // "<path>.<key> is required"
  Reader at(std::size_t i) const;               // an array's item
  // An object field whose wrong value reads as absent (ACP's `_meta` and `annotations` are
  // "default on error").
  std::optional<boost::json::object> lenient_object(std::string_view key) const;

  // Typed reads through `read(const Reader&, T&)` overloads (below and in the schema files).
  template <class T>
  T as() const;
  template <class T>
  T get(std::string_view key) const {
    return required(key).as<T>();
  }
  template <class T>
  std::optional<T> get_optional(std::string_view key) const {
    auto f = field(key);
    if (!f) return std::nullopt;
    return f->as<T>();
  }

 private:
  std::string child(std::string_view key) const { return path_.empty() ? std::string(key) : path_ + "." + std::string(key); }
  const boost::json::value* v_;
  std::string path_;
};

inline void read(const Reader& r, std::string& out) { out = r.string(); }
inline void read(const Reader& r, bool& out) { out = r.boolean(); }
inline void read(const Reader& r, std::int64_t& out) { out = r.integer(); }
inline void read(const Reader& r, boost::json::object& out) { out = r.object(); }
template <class T>
void read(const Reader& r, std::vector<T>& out) {
  const auto& a = r.array();
  out.clear();
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(r.at(i).as<T>());
}

template <class T>
T Reader::as() const {
  T out{};
  read(*this, out);
  return out;
}

// Decodes a request's params as T ("params must be an object" unless T is read otherwise).
template <class T>
T decode(const boost::json::value& params) {
  return Reader(params).as<T>();
}

// ---- Encoding ----
// Sets `key` only when `v` holds a value.
template <class T>
void put_if(boost::json::object& o, std::string_view key, const std::optional<T>& v) {
  if (v) o[key] = boost::json::value_from(*v, o.storage());
}
inline void put_if(boost::json::object& o, std::string_view key, const std::optional<boost::json::object>& v) {
  if (v) o[key] = *v;
}
// `_meta` when there is one.
inline void put_meta(boost::json::object& o, const std::optional<boost::json::object>& meta) { put_if(o, "_meta", meta); }

}  // namespace acp::schema
