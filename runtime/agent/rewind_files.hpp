#pragma once
// _session/rewind_files (issue 36): the files the agent changed from a user message on are put
// back as they were before it, from the checkpoints its tools took (checkpointing.hpp). A file the
// agent created is deleted; one changed by hand since the agent's last write is a conflict, left
// alone unless forced; one whose content the bound dropped is unavailable. A dry run changes nothing.
#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>
#include <vector>

#include "runtime/agent/session.hpp"
#include "runtime/agent/session_history.hpp"

namespace runtime {

struct FileRewound {
  std::string path;
  std::string action;  // "restore", "delete", "conflict", "unavailable", "failed"
  std::string error;   // "failed": why
};
struct FilesRewound {
  std::vector<FileRewound> files;
  std::size_t dropped = 0;  // checkpoints the bound has dropped in this session
  std::vector<std::string> unkept_commands;  // executors where commands ran since, not checkpointed
};

// Throws AgentError: InvalidRequest while a turn runs or for a session that is not saved,
// InvalidParams for a message the session does not have.
boost::asio::awaitable<FilesRewound> rewind_files(SessionHistory& history, std::shared_ptr<Session> session,
                                                  std::string message_id, bool dry_run, bool force);

}  // namespace runtime
