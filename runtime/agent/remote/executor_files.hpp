#pragma once
// Skills and AGENTS.md of a session whose default executor is not `local` (DESIGN §10): read on
// that executor, in one command (ssh: one round trip on the warm connection).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include "runtime/engine/engine.hpp"
#include "runtime/protocol/executor.hpp"
#include "support/cancellation.hpp"

namespace runtime {

// The SKILL.md files of the working-directory and home skill places (with_skills) and the
// AGENTS.md chain there. An executor that cannot run commands (virtual, openvaala) gives the
// AGENTS.md of its working directory only. Throws ExecutorError naming the executor.
boost::asio::awaitable<engine::ExecutorSnapshot> read_executor_files(Executor& executor, bool with_skills,
                                                                     support::CancelSource* cancel);

struct Session;
// The first time a tool of the session used `executor` (not its default one): the AGENTS.md
// chain there not yet given to the model, as prompt text ("" when none or already given).
boost::asio::awaitable<std::string> agents_md_on_first_use(Session& session, Executor& executor,
                                                           boost::asio::thread_pool& pool, support::CancelSource* cancel);

// After a read of `path` on `executor` (not the local default, which the engine handles): the
// AGENTS.md files between its working directory `workdir` and the file's folder not yet given,
// as prompt text ("" when none). Another executor's files are named `<id>:<path>` as above.
boost::asio::awaitable<std::string> agents_md_after_read_on(Session& session, Executor& executor, const std::string& workdir,
                                                            const std::string& path, support::CancelSource* cancel);

// Parses what the command printed (exposed for tests).
engine::ExecutorSnapshot parse_executor_files(const std::string& executor_id, std::string_view out);

}  // namespace runtime
