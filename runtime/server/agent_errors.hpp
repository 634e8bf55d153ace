#pragma once
// Engine errors as the editor protocol's errors, for the ACP members of this folder (anything
// else becomes -32603 in acp::Connection), and the lookup of an open session.
#include <memory>
#include <string>

#include "acp/connection.hpp"
#include "acp/rpc_error.hpp"
#include "runtime/agent/agent_error.hpp"
#include "runtime/agent/session_manager.hpp"
#include "runtime/mcp/mcp_manager.hpp"
#include "runtime/providers/model_provider.hpp"

namespace runtime::server {

// Runs `body` (a coroutine lambda), mapping AgentError, ModelError and a required MCP server that
// cannot start to their JSON-RPC errors. `body` is taken by reference: GCC 12 destroys a
// coroutine lambda's temporaries twice when it is passed by value into co_await.
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

// The session `id` open on this connection; -32002 when it is not.
inline std::shared_ptr<Session> find_open_session(SessionManager& sessions, const std::string& id) {
  try {
    return sessions.find(id);
  } catch (const AgentError& e) {
    throw acp::RpcError(acp::error_code::kResourceNotFound, e.what());
  }
}

}  // namespace runtime::server
