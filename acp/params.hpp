#pragma once
// Reading request params with errors that name the offending field (-32602).
#include <boost/json.hpp>
#include <optional>
#include <string>

#include "acp/rpc_error.hpp"

namespace acp {

class Params {
 public:
  explicit Params(const boost::json::value& v);

  const boost::json::object& object() const { return obj_; }
  bool has(std::string_view key) const;

  std::string required_string(std::string_view key) const;
  std::optional<std::string> optional_string(std::string_view key) const;
  std::optional<std::int64_t> optional_int(std::string_view key) const;
  std::optional<bool> optional_bool(std::string_view key) const;
  const boost::json::array& required_array(std::string_view key) const;
  const boost::json::array* optional_array(std::string_view key) const;
  const boost::json::object* optional_object(std::string_view key) const;
  const boost::json::value& required(std::string_view key) const;

 private:
  static const boost::json::object& empty();
  boost::json::object obj_;
};

// Small accessors for reading JSON the server does not own the shape of (client replies,
// model streams): a missing or mistyped field reads as the fallback instead of throwing.
std::string_view str_or(const boost::json::value* v, std::string_view fallback = {});
std::string_view str_at(const boost::json::object& o, std::string_view key,
                        std::string_view fallback = {});
const boost::json::object* obj_at(const boost::json::object& o, std::string_view key);
const boost::json::array* arr_at(const boost::json::object& o, std::string_view key);
std::optional<std::int64_t> int_at(const boost::json::object& o, std::string_view key);
bool bool_at(const boost::json::object& o, std::string_view key, bool fallback = false);

}  // namespace acp
