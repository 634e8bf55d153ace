#pragma once
// JSON-RPC error codes and the exception handlers throw to answer a request with an error.
#include <boost/json/value.hpp>
#include <stdexcept>
#include <string>

namespace acp {

namespace error_code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kRequestCancelled = -32800;
inline constexpr int kAuthRequired = -32000;
inline constexpr int kResourceNotFound = -32002;
}  // namespace error_code

class RpcError : public std::runtime_error {
 public:
  RpcError(int code, std::string message, boost::json::value data = nullptr)
      : std::runtime_error(std::move(message)), code_(code), data_(std::move(data)) {}
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
