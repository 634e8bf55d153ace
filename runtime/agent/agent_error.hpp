#pragma once
// Why the agent refused a request, in the engine's terms; runtime/server turns each kind into
// the editor protocol's error code.
#include <stdexcept>
#include <string>

namespace runtime {

struct AgentError : std::runtime_error {
  enum class Kind {
    NotFound,        // no such session
    InvalidRequest,  // not now (already open, a prompt already running)
    InvalidParams,   // a bad value in the request
    Internal,        // the configuration does not load, ...
  };
  AgentError(Kind kind, const std::string& message) : std::runtime_error(message), kind(kind) {}
  Kind kind;
};

}  // namespace runtime
