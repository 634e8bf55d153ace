#pragma once
// JSON-RPC error codes and the exception handlers throw to answer a request with an error.
#include <boost/json/value.hpp>
#include <stdexcept>
#include <string>

#include "support/json_rpc.hpp"

namespace acp {

namespace error_code {
using namespace support::json_rpc::error_code;  // -32700 .. -32603, JSON-RPC's own
inline constexpr int kRequestCancelled = -32800;
inline constexpr int kAuthRequired = -32000;
inline constexpr int kResourceNotFound = -32002;
}  // namespace error_code

class RpcError : public std::runtime_error {
 public:
  RpcError(int code, std::string message, boost::json::value data = nullptr)
      : std::runtime_error(std::move(message)), code_(code), data_(std::move(data)) {}
  // The error a peer answered with.
  explicit RpcError(support::json_rpc::ErrorObject e) : RpcError(e.code, std::move(e.message), std::move(e.data)) {}
  int code() const { return code_; }
  const boost::json::value& data() const { return data_; }

 private:
  int code_;
  boost::json::value data_;
};

inline RpcError invalid_params(const std::string& what) {
  return RpcError(error_code::kInvalidParams, "Invalid params: " + what);
}

}  // namespace acp
