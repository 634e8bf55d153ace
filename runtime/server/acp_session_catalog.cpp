#include "runtime/server/acp_session_catalog.hpp"

#include <spdlog/spdlog.h>

#include "acp/methods.hpp"
#include "runtime/server/agent_errors.hpp"

namespace runtime::server {

namespace json = boost::json;
namespace schema = acp::schema;

namespace {
// -32002 carrying the session id in `data`, as session/status asks of an unknown session.
[[noreturn]] void unknown_session(const std::string& id, const std::string& message) {
  throw acp::RpcError(acp::error_code::kResourceNotFound, message, json::object{{"sessionId", id}});
}

}  // namespace

void AcpSessionCatalog::bind(acp::Binder& binder) {
  using namespace acp::methods;
  binder.method(kSessionList, this, &AcpSessionCatalog::list_sessions);
  binder.method(kSessionSetTitle, this, &AcpSessionCatalog::set_title);
  binder.method(kSessionArchive, this, &AcpSessionCatalog::archive);
  binder.method(kSessionUnarchive, this, &AcpSessionCatalog::unarchive);
  binder.method(kSessionStatus, this, &AcpSessionCatalog::session_status);
}

acp::awaitable<schema::ListSessionsResponse> AcpSessionCatalog::list_sessions(schema::ListSessionsRequest req) {
  auto archived = req.archived == "include" ? sessions::ArchiveFilter::Include
                  : req.archived == "only"  ? sessions::ArchiveFilter::Only
                                            : sessions::ArchiveFilter::Exclude;
  auto body = [&]() -> acp::awaitable<sessions::ListPage> { co_return co_await sessions_.catalog().list(req.cwd, req.cursor, archived); };
  auto page = co_await mapping_errors(body);
  schema::ListSessionsResponse reply;
  for (const auto& s : page.sessions) {
    schema::SessionInfo info{s.id, s.cwd, std::nullopt, std::nullopt, s.archived};
    if (!s.title.empty()) info.title = s.title;
    if (!s.updated_at.empty()) info.updatedAt = s.updated_at;
    reply.sessions.push_back(std::move(info));
  }
  reply.nextCursor = page.next_cursor;
  co_return reply;
}

acp::awaitable<schema::SetSessionTitleResponse> AcpSessionCatalog::set_title(schema::SetSessionTitleRequest req) {
  std::string stored;
  try {
    stored = co_await sessions_.catalog().set_title(req.sessionId, std::move(req.title));
  } catch (const AgentError& e) {
    if (e.kind == AgentError::Kind::NotFound) unknown_session(req.sessionId, e.what());
    if (e.kind == AgentError::Kind::InvalidParams) throw acp::invalid_params(e.what());
    throw acp::RpcError(acp::error_code::kInternalError, e.what());
  }
  co_return schema::SetSessionTitleResponse{stored};
}

acp::awaitable<acp::EmptyResponse> AcpSessionCatalog::archive(schema::SessionRef req) {
  co_await set_archived(req.sessionId, true);
  co_return Empty{};
}

acp::awaitable<acp::EmptyResponse> AcpSessionCatalog::unarchive(schema::SessionRef req) {
  co_await set_archived(req.sessionId, false);
  co_return Empty{};
}

acp::awaitable<void> AcpSessionCatalog::set_archived(const std::string& id, bool archived) {
  try {
    co_await sessions_.catalog().set_archived(id, archived);
  } catch (const AgentError& e) {
    if (e.kind == AgentError::Kind::NotFound) unknown_session(id, e.what());
    throw acp::RpcError(acp::error_code::kInternalError, e.what());
  }
}

acp::awaitable<schema::SessionStatusResponse> AcpSessionCatalog::session_status(schema::SessionRef req) {
  const char* status = nullptr;
  try {
    status = co_await sessions_.catalog().status(req.sessionId);
  } catch (const AgentError& e) {
    unknown_session(req.sessionId, e.what());
  }
  co_return schema::SessionStatusResponse{status};
}

}  // namespace runtime::server
