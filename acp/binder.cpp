#include "acp/binder.hpp"

namespace acp {

Binder::Binder(Connection& conn) : conn_(conn) {
  conn_.on_unbound_method([this](std::string_view method) -> std::optional<RpcError> {
    if (initialized_) return std::nullopt;  // method not found
    return RpcError(error_code::kInvalidRequest,
                    "The agent is not initialized: send `initialize` before " + std::string(method));
  });
}

}  // namespace acp
