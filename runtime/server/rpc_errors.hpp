#pragma once
// Engine errors as the editor protocol's errors, for the ACP handlers (acp_agent*.cpp). Anything
// else becomes -32603 in Connection.
#include "acp/connection.hpp"
#include "acp/params.hpp"
#include "acp/rpc_error.hpp"
#include "runtime/agent/agent_error.hpp"
#include "runtime/mcp/mcp_manager.hpp"
#include "runtime/providers/model_provider.hpp"

namespace runtime::server {

template <class F>
auto mapping_errors(F& body) -> decltype(body()) {
  try {
    co_return co_await body();
  } catch (const AgentError& e) {
    switch (e.kind) {
      case AgentError::Kind::NotFound: throw acp::RpcError(acp::error_code::kResourceNotFound, e.what());
      case AgentError::Kind::InvalidRequest: throw acp::RpcError(acp::error_code::kInvalidRequest, e.what());
      case AgentError::Kind::InvalidParams: throw acp::invalid_params(e.what());
      case AgentError::Kind::Internal: throw acp::RpcError(acp::error_code::kInternalError, e.what());
    }
    throw;
  } catch (const providers::ModelError& e) {
    throw acp::RpcError(e.kind() == providers::ModelError::Kind::Auth ? acp::error_code::kAuthRequired
                                                                      : acp::error_code::kInternalError,
                        e.what());
  } catch (const runtime::mcp::RequiredServerUnavailable& e) {
    throw acp::RpcError(acp::error_code::kInternalError, e.what());
  }
}

}  // namespace runtime::server
