#include "runtime/server/acp_rewind.hpp"

#include "acp/methods.hpp"
#include "runtime/agent/rewind.hpp"
#include "runtime/agent/rewind_files.hpp"
#include "runtime/server/agent_errors.hpp"
#include "support/random_id.hpp"

namespace runtime::server {

namespace schema = acp::schema;

namespace {

schema::RewindFilesResponse files_answer(const FilesRewound& done, bool dry_run) {
  schema::RewindFilesResponse answer;
  answer.dryRun = dry_run;
  bool unavailable = false;
  for (const auto& f : done.files) {
    answer.files.push_back({f.path, f.action, f.error.empty() ? std::nullopt : std::optional<std::string>(f.error)});
    unavailable = unavailable || f.action == "unavailable";
  }
  if (done.dropped) answer.droppedCheckpoints = static_cast<std::int64_t>(done.dropped);
  std::string note;
  if (unavailable)
    note = "Some files cannot be restored: their checkpoints were dropped (the oldest go past the size limit), they "
           "were too large to keep, or their executor cannot be reached.";
  for (const auto& executor : done.unkept_commands)
    note += std::string(note.empty() ? "" : " ") + "Commands ran on executor '" + executor +
            "', where what commands change is not checkpointed: those changes are not put back.";
  if (!note.empty()) answer.note = std::move(note);
  return answer;
}

}  // namespace

void AcpRewind::bind(acp::Binder& binder) {
  binder.method(acp::methods::kSessionRewind, this, &AcpRewind::rewind);
  binder.method(acp::methods::kSessionRewindFiles, this, &AcpRewind::rewind_files);
}

boost::json::object AcpRewind::initialize_meta() {
  return boost::json::object{{"rewind", boost::json::object{{"supported", true}, {"files", true}}}};
}

// A turn running is -32600, an unknown message -32602, an unknown or closed session -32002.
acp::awaitable<schema::RewindResponse> AcpRewind::rewind(schema::RewindRequest req) {
  auto session = find_open_session(sessions_, req.sessionId);
  auto body = [&]() -> acp::awaitable<void> { co_await rewind_conversation(sessions_.history(), session, req.messageId); };
  co_await mapping_errors(body);
  co_return schema::RewindResponse{true, session->id};
}

acp::awaitable<schema::RewindFilesResponse> AcpRewind::rewind_files(schema::RewindRequest req) {
  auto session = find_open_session(sessions_, req.sessionId);
  auto body = [&]() -> acp::awaitable<FilesRewound> {
    co_return co_await runtime::rewind_files(sessions_.history(), session, req.messageId, req.dryRun, req.force);
  };
  FilesRewound done = co_await mapping_errors(body);
  co_return files_answer(done, req.dryRun);
}

std::string prompt_message_id(const std::optional<std::string>& client_id, const Session& session) {
  if (!client_id) return support::random_id("msg_");
  try {
    check_new_message_id(session, *client_id);
  } catch (const AgentError& e) {
    throw acp::invalid_params(e.what());
  }
  return *client_id;
}

}  // namespace runtime::server
