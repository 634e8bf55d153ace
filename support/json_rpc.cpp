// The error object of a JSON-RPC error response, read the same way by both peers.
#include "support/json_rpc.hpp"

namespace support::json_rpc {

ErrorObject error_from(const boost::json::value& error) {
  int code = error_code::kInternalError;
  std::string message = "error";
  boost::json::value data = nullptr;
  if (const auto* e = error.if_object()) {
    if (auto* c = e->if_contains("code"); c && c->is_int64()) code = static_cast<int>(c->as_int64());
    if (auto* m = e->if_contains("message"); m && m->is_string()) message = m->as_string();
    if (auto* d = e->if_contains("data")) data = *d;
  }
  return ErrorObject{code, std::move(message), std::move(data)};
}

}  // namespace support::json_rpc
