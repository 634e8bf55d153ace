#pragma once
// Small accessors for reading JSON whose shape we do not own (client replies, model streams,
// MCP results, journal lines): a missing or mistyped field reads as the fallback instead of
// throwing. Strict request decoding with errors that name the field is acp::schema::Reader.
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string_view>

namespace support {

std::string_view str_or(const boost::json::value* v, std::string_view fallback = {});
std::string_view str_at(const boost::json::object& o, std::string_view key, std::string_view fallback = {});
const boost::json::object* obj_at(const boost::json::object& o, std::string_view key);
const boost::json::array* arr_at(const boost::json::object& o, std::string_view key);
std::optional<std::int64_t> int_at(const boost::json::object& o, std::string_view key);
bool bool_at(const boost::json::object& o, std::string_view key, bool fallback = false);

}  // namespace support
