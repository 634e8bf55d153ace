#include "runtime/server/rewind_methods.hpp"

#include "runtime/agent/agent_error.hpp"
#include "runtime/agent/rewind.hpp"
#include "runtime/agent/rewind_files.hpp"
#include "support/random_id.hpp"

namespace runtime::server {

namespace json = boost::json;

namespace {

// A session of the request, or -32002 (unknown or closed).
std::shared_ptr<Session> session_of(SessionManager& sessions, const acp::Params& p) {
  try {
    return sessions.find(p.required_string("sessionId"));
  } catch (const AgentError& e) {
    throw acp::RpcError(acp::error_code::kResourceNotFound, e.what());
  }
}

// The rewind's errors as the protocol's: a turn running is -32600, a bad id -32602.
acp::RpcError rpc_error(const AgentError& e) {
  switch (e.kind) {
    case AgentError::Kind::InvalidRequest: return acp::RpcError(acp::error_code::kInvalidRequest, e.what());
    case AgentError::Kind::InvalidParams: return acp::invalid_params(e.what());
    case AgentError::Kind::NotFound: return acp::RpcError(acp::error_code::kResourceNotFound, e.what());
    case AgentError::Kind::Internal: break;
  }
  return acp::RpcError(acp::error_code::kInternalError, e.what());
}

// `messageId`, or claude-agent-acp's `beforeMessage.messageId`.
std::string rewound_message_id(const acp::Params& p) {
  if (auto id = p.optional_string("messageId")) return *id;
  if (const auto* before = p.object().if_contains("beforeMessage"); before && before->is_object())
    return acp::Params(*before).required_string("messageId");
  throw acp::invalid_params("missing required field 'messageId'");
}

acp::awaitable<json::value> rewind_method(SessionManager& sessions, json::value params) {
  acp::Params p(params);
  auto session = session_of(sessions, p);
  const std::string message_id = rewound_message_id(p);
  std::optional<acp::RpcError> failed;
  try {
    co_await rewind_conversation(sessions.history(), session, message_id);
  } catch (const AgentError& e) {
    failed = rpc_error(e);
  }
  if (failed) throw *failed;
  co_return json::object{{"rewound", true}, {"sessionId", session->id}};
}

json::object files_answer(const FilesRewound& done, bool dry_run) {
  json::array files;
  bool unavailable = false;
  for (const auto& f : done.files) {
    json::object o{{"path", f.path}, {"action", f.action}};
    if (!f.error.empty()) o["error"] = f.error;
    unavailable = unavailable || f.action == "unavailable";
    files.push_back(std::move(o));
  }
  json::object answer{{"files", std::move(files)}, {"dryRun", dry_run}};
  if (done.dropped) answer["droppedCheckpoints"] = done.dropped;
  if (unavailable)
    answer["note"] = "Some files cannot be restored: their checkpoints were dropped (the oldest go past the size limit) "
                     "or they were too large to keep.";
  return answer;
}

acp::awaitable<json::value> rewind_files_method(SessionManager& sessions, json::value params) {
  acp::Params p(params);
  auto session = session_of(sessions, p);
  const std::string message_id = rewound_message_id(p);
  const bool dry_run = p.optional_bool("dryRun").value_or(false), force = p.optional_bool("force").value_or(false);
  std::optional<acp::RpcError> failed;
  FilesRewound done;
  try {
    done = co_await runtime::rewind_files(sessions.history(), session, message_id, dry_run, force);
  } catch (const AgentError& e) {
    failed = rpc_error(e);
  }
  if (failed) throw *failed;
  co_return files_answer(done, dry_run);
}

}  // namespace

void bind_rewind_methods(acp::Connection& conn, SessionManager& sessions) {
  conn.on_request("_session/rewind", [&sessions](json::value p, acp::RequestContext) { return rewind_method(sessions, std::move(p)); });
  conn.on_request("_session/rewind_files",
                  [&sessions](json::value p, acp::RequestContext) { return rewind_files_method(sessions, std::move(p)); });
}

std::string prompt_message_id(const acp::Params& p, const Session& session) {
  auto id = p.optional_string("messageId");
  if (!id) return support::random_id("msg_");
  try {
    check_new_message_id(session, *id);
  } catch (const AgentError& e) {
    throw rpc_error(e);
  }
  return *id;
}

}  // namespace runtime::server
