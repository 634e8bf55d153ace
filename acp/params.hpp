#pragma once
// Reading request params with errors that name the offending field (-32602).
#include <boost/json.hpp>
#include <optional>
#include <string>

#include "acp/rpc_error.hpp"

namespace acp {

class Params {
 public:
  // Reads `v` in place (params may be most of a 200 MiB message: never copied); `v` must
  // outlive the Params.
  explicit Params(const boost::json::value& v);
  explicit Params(boost::json::value&&) = delete;

  const boost::json::object& object() const { return *obj_; }
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
  const boost::json::object* obj_;
};

}  // namespace acp
