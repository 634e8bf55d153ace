#include "acp/client_api.hpp"

#include "acp/methods.hpp"
#include "acp/params.hpp"
#include "support/json_read.hpp"

namespace acp {

namespace json = boost::json;
using support::bool_at;
using support::int_at;
using support::obj_at;
using support::str_at;

void ClientApi::session_update(const std::string& session_id, json::object update) {
  conn_.notify(methods::kSessionUpdate, json::object{{"sessionId", session_id}, {"update", std::move(update)}});
}

void ClientApi::session_update_json(const std::string& session_id, std::size_t size,
                                    const std::function<void(std::string&)>& write_update) {
  // What session_update's object serialises to.
  conn_.notify_json(methods::kSessionUpdate, size + session_id.size() + 32, [&](std::string& out) {
    out += R"({"sessionId":)";
    out += json::serialize(json::string_view(session_id));
    out += R"(,"update":)";
    write_update(out);
    out += '}';
  });
}

awaitable<std::optional<std::string>> ClientApi::request_permission(
    const std::string& session_id, json::object tool_call, const std::vector<PermissionOption>& options,
    CancelSource* cancel) {
  json::array opts;
  for (const auto& o : options)
    opts.push_back(json::object{{"optionId", o.option_id}, {"name", o.name}, {"kind", o.kind}});
  json::value reply;
  json::object params{{"sessionId", session_id}, {"toolCall", std::move(tool_call)}, {"options", std::move(opts)}};
  try {
    reply = co_await conn_.call(methods::kRequestPermission, std::move(params), cancel);
  } catch (const RpcError& e) {
    // A client that went away (a network connection dropped) cannot answer: cancelled, as if it
    // had cancelled the prompt. Nothing is allowed without an answer.
    if (e.code() == error_code::kRequestCancelled || conn_.closed()) co_return std::nullopt;
    throw;
  }
  if (reply.is_object()) {
    if (auto* outcome = obj_at(reply.as_object(), "outcome")) {
      if (str_at(*outcome, "outcome") == "selected") co_return std::string(str_at(*outcome, "optionId"));
    }
  }
  co_return std::nullopt;
}

awaitable<json::object> ClientApi::create_elicitation(json::object params, CancelSource* cancel) {
  json::value reply;
  try {
    reply = co_await conn_.call(methods::kElicitationCreate, std::move(params), cancel);
  } catch (const RpcError& e) {
    if (e.code() == error_code::kRequestCancelled) co_return json::object{{"action", "cancel"}};
    throw;
  }
  if (cancel && cancel->cancelled()) co_return json::object{{"action", "cancel"}};
  if (!reply.is_object() || str_at(reply.as_object(), "action").empty())
    throw RpcError(error_code::kInternalError, "elicitation/create: the reply has no action");
  co_return std::move(reply.as_object());
}

void ClientApi::complete_elicitation(const std::string& elicitation_id) {
  conn_.notify(methods::kElicitationComplete, json::object{{"elicitationId", elicitation_id}});
}

awaitable<std::string> ClientApi::read_text_file(const std::string& session_id, const std::string& path,
                                                 std::optional<std::int64_t> line,
                                                 std::optional<std::int64_t> limit, CancelSource* cancel) {
  json::object p{{"sessionId", session_id}, {"path", path}};
  if (line) p["line"] = *line;
  if (limit) p["limit"] = *limit;
  auto reply = co_await conn_.call(methods::kFsReadTextFile, std::move(p), cancel);
  if (!reply.is_object()) throw RpcError(error_code::kInternalError, "fs/read_text_file: malformed reply");
  co_return std::string(str_at(reply.as_object(), "content"));
}

awaitable<void> ClientApi::write_text_file(const std::string& session_id, const std::string& path,
                                           const std::string& content, CancelSource* cancel) {
  json::object params{{"sessionId", session_id}, {"path", path}, {"content", content}};
  co_await conn_.call(methods::kFsWriteTextFile, std::move(params), cancel);
}

awaitable<std::string> ClientApi::terminal_create(const std::string& session_id, const std::string& command,
                                                  const std::vector<std::string>& args, const std::string& cwd,
                                                  std::int64_t output_byte_limit, CancelSource* cancel) {
  json::array a;
  for (const auto& s : args) a.emplace_back(s);
  json::object params{{"sessionId", session_id}, {"command", command}, {"args", std::move(a)},
                      {"env", json::array{}},      {"cwd", cwd},         {"outputByteLimit", output_byte_limit}};
  auto reply = co_await conn_.call(methods::kTerminalCreate, std::move(params), cancel);
  if (!reply.is_object() || str_at(reply.as_object(), "terminalId").empty())
    throw RpcError(error_code::kInternalError, "terminal/create: the reply has no terminalId");
  co_return std::string(str_at(reply.as_object(), "terminalId"));
}

static json::object terminal_params(const std::string& session_id, const std::string& terminal_id) {
  return json::object{{"sessionId", session_id}, {"terminalId", terminal_id}};
}

static TerminalExit exit_from(const json::object& o) {
  TerminalExit e;
  e.exit_code = int_at(o, "exitCode");
  if (auto s = str_at(o, "signal"); !s.empty()) e.signal = std::string(s);
  return e;
}

awaitable<TerminalOutput> ClientApi::terminal_output(const std::string& session_id, const std::string& terminal_id) {
  auto reply = co_await conn_.call(methods::kTerminalOutput,
                                   terminal_params(session_id, terminal_id));
  TerminalOutput out;
  if (reply.is_object()) {
    const auto& o = reply.as_object();
    out.output = std::string(str_at(o, "output"));
    out.truncated = bool_at(o, "truncated");
    if (auto* es = obj_at(o, "exitStatus")) out.exit_status = exit_from(*es);
  }
  co_return out;
}

awaitable<TerminalExit> ClientApi::terminal_wait_for_exit(const std::string& session_id,
                                                          const std::string& terminal_id, CancelSource* cancel) {
  auto reply = co_await conn_.call(methods::kTerminalWaitForExit,
                                   terminal_params(session_id, terminal_id), cancel);
  co_return reply.is_object() ? exit_from(reply.as_object()) : TerminalExit{};
}

awaitable<void> ClientApi::terminal_kill(const std::string& session_id, const std::string& terminal_id) {
  co_await conn_.call(methods::kTerminalKill, terminal_params(session_id, terminal_id));
}

awaitable<void> ClientApi::terminal_release(const std::string& session_id, const std::string& terminal_id) {
  co_await conn_.call(methods::kTerminalRelease, terminal_params(session_id, terminal_id));
}

}  // namespace acp
