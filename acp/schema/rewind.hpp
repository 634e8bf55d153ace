#pragma once
// Taking back a message (issue 36, docs/editors.md), an extension as claude-agent-acp ships it:
//   _session/rewind {sessionId, messageId}                        -> {rewound: true, sessionId}
//   _session/rewind_files {sessionId, messageId, dryRun?, force?} -> {files: [{path, action}], dryRun, ...}
// claude-agent-acp's `beforeMessage: {messageId}` names the message too.
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "acp/schema/reader.hpp"

namespace acp::schema {

struct RewindRequest {
  std::string sessionId;
  std::string messageId;
  bool dryRun = false;  // rewind_files: say what would change, change nothing
  bool force = false;   // rewind_files: restore files changed by hand since, too
};
struct RewindResponse {
  bool rewound = true;
  std::string sessionId;
};
struct RewoundFile {
  std::string path;
  std::string action;  // restore | delete | conflict | unavailable | failed
  std::optional<std::string> error;
};
struct RewindFilesResponse {
  std::vector<RewoundFile> files;
  bool dryRun = false;
  std::optional<std::int64_t> droppedCheckpoints;
  std::optional<std::string> note;
};

void read(const Reader& r, RewindRequest& out);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const RewindResponse& r);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const RewoundFile& f);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const RewindFilesResponse& r);

}  // namespace acp::schema
