#pragma once
// What a session sees of its engine as read on its default executor (DESIGN §10): its view (the
// skills and AGENTS.md there) at open and on a switch, and the AGENTS.md chain again every turn.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include "runtime/agent/session.hpp"
#include "support/cancellation.hpp"

namespace runtime {

// The view from the engine and the files read on the executor before (none on local).
void rebuild_view(Session& s);
// The skills and AGENTS.md read on the default executor, then rebuild_view; when that executor
// cannot be reached, a notice says so and the view has the local-side skills only.
boost::asio::awaitable<void> read_view(Session& s);
// Every turn: the AGENTS.md chain again, on the default executor (on `pool` when local).
boost::asio::awaitable<void> reread_agents_md(Session& s, boost::asio::thread_pool& pool, support::CancelSource* cancel);

}  // namespace runtime
