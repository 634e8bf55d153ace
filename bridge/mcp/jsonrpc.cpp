#include "bridge/mcp/jsonrpc.hpp"

#include <spdlog/spdlog.h>

namespace bridge::mcp {

namespace json = boost::json;

json::object error_response(const json::value& id, int code, std::string message) {
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", json::object{{"code", code}, {"message", std::move(message)}}}};
}

std::vector<json::object> parse_messages(std::string_view text, std::string_view log_id) {
  std::vector<json::object> out;
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec) {
    spdlog::warn("mcp {}: dropping a message that is not JSON ({}): {}", log_id, ec.message(),
                 std::string(text.substr(0, 200)));
    return out;
  }
  if (v.is_object()) {
    out.push_back(std::move(v.as_object()));
  } else if (v.is_array()) {
    for (auto& e : v.as_array())
      if (e.is_object()) out.push_back(std::move(e.as_object()));
  } else {
    spdlog::warn("mcp {}: dropping a JSON value that is not a message", log_id);
  }
  return out;
}

}  // namespace bridge::mcp
