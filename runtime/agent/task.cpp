#include "runtime/agent/task.hpp"

#include "runtime/mcp/sign_in_notice.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <utility>
#include <spdlog/spdlog.h>

#include "runtime/agent/checkpointing.hpp"
#include "runtime/agent/journal.hpp"
#include "runtime/agent/permissions_command.hpp"
#include "runtime/agent/remote/session_executor.hpp"
#include "runtime/agent/spawn_agent_tool.hpp"
#include "runtime/agent/steering.hpp"
#include "runtime/mcp/mcp_manager.hpp"
#include "support/json_read.hpp"
#include "support/random_id.hpp"

namespace runtime {

namespace {
bool is_compact_command(const Session& session, const std::string& text) {
  auto start = text.find_first_not_of(" \t");
  return start != std::string::npos && text.compare(start, 8, "/compact") == 0 && !session.services.view.find_skill("compact");
}

// A server that starts slowly (npx fetching its package, a remote host) would leave the editor
// showing nothing while the turn waits for it: after this long, a notice names what it waits for.
constexpr std::chrono::milliseconds kMcpSlowStart{1000};

// Arms a one-off notice naming the session's MCP servers the turn still waits for when `timer`
// fires (optional ones only while within `optional_wait`); the caller cancels `timer` when the
// servers are ready.
void notice_slow_mcp_start(boost::asio::steady_timer& timer, const Session& session,
                           std::shared_ptr<mcp::McpManager> manager, std::chrono::milliseconds optional_wait) {
  timer.expires_after(kMcpSlowStart);
  const bool waits_for_optional = optional_wait > kMcpSlowStart;
  timer.async_wait([&session, manager, waits_for_optional](boost::system::error_code ec) {
    if (ec) return;  // ready in time (or the turn ended): the session and host may be gone
    std::string waiting;
    for (const auto& s : manager->status())
      if ((s.state == mcp::ServerState::Starting || s.state == mcp::ServerState::NotStarted) && (s.required || waits_for_optional))
        waiting += (waiting.empty() ? "" : ", ") + s.id;
    if (!waiting.empty())
      notify(session, {NoticeSeverity::Info, "Waiting for MCP servers to start",
                       waiting + ": the prompt goes on as soon as they are ready (or have failed)."});
  });
}

std::string joined_list(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out;
}

// The optional MCP servers a turn went on without (still starting) join it at a later model
// request, each with a notice; their tools live as long as the turn's settings.
void join_late_servers(TurnSettings& settings, const Session& session,
                       std::shared_ptr<mcp::McpManager> manager, std::shared_ptr<mcp::McpManager::TurnOffer> offer) {
  notify(session, {NoticeSeverity::Info, "Going on without MCP servers still starting",
                   joined_list(offer->late) + ": their tools join the conversation as soon as they are ready."});
  auto owned = std::make_shared<std::vector<std::unique_ptr<tools::Tool>>>();
  settings.join_late_tools = [&settings, &session, manager, offer, owned] {
    if (offer->late.empty()) return false;
    auto joined = manager->join_late(*offer);
    if (joined.servers.empty()) return false;
    notify(session, {NoticeSeverity::Info, "MCP servers joined the turn",
                     joined_list(joined.servers) + " started after the prompt began: their tools are offered from now on."});
    for (auto& t : joined.tools) {
      settings.extra_tools.push_back(t.get());
      owned->push_back(std::move(t));
    }
    return true;
  };
}

std::string system_prompt(const Session& session) {
  std::string s = base_system_prompt(session);
  if (auto block = session.services.view.system_prompt_block(); !block.empty()) s += "\n" + block;
  if (!session.settings.client_instructions.replace && !session.settings.client_instructions.text.empty())
    s += "\n" + session.settings.client_instructions.text;
  return s;
}
}  // namespace

std::string executors_prompt(const Session& session);

std::string base_system_prompt(const Session& session) {
  // The editor's systemPrompt in "override" mode replaces our instructions; the environment stays.
  const auto& own = session.settings.client_instructions;
  std::string instructions =
      own.replace ? own.text
                  : "You are OpenVaala, a coding agent working inside the user's editor. You help with software engineering "
                    "tasks in the user's project: read files with read_file, change them with apply_patch, and run commands "
                    "with bash. Prefer small, verifiable steps; read before you edit; after changing code, run the relevant "
                    "checks. Keep answers short and concrete.";
  return instructions + "\n\nEnvironment:\n- Working directory: " + session.settings.cwd.string() + "\n- Platform: linux\n" +
         executors_prompt(session);
}

// Which executors the tools can run on (DESIGN §10), the session's default first named.
std::string executors_prompt(const Session& session) {
  if (!session.services.executors || !session.services.engine || session.services.engine->executors().empty()) return {};
  std::string s = "\nExecutors (machines and folders where read_file, apply_patch and bash work; pass `executor` to "
                  "choose one, paths there are absolute or relative to its working directory). Default: " +
                  session.settings.executor + ".\n";
  for (const auto& id : session.services.executors->ids())
    if (auto ex = session.services.executors->find(id, session.settings.cwd)) s += "- " + ex->describe() + "\n";
  return s;
}

// One prompt in flight.
struct Task::Prompt {
  std::shared_ptr<Session> session;
  Message message;
  std::shared_ptr<const engine::Engine> engine;  // one snapshot for the whole turn, even across a reload
  std::shared_ptr<const hooks::HookSet> hooks;
  std::unique_ptr<providers::Model> model;
  TurnSettings settings;
  support::CancelSource& cancel;
  std::string title_before;  // the journal's title when the prompt came
};

Task::Task(Deps deps) : deps_(std::move(deps)), plan_tool_(tools::make_update_plan_tool()) {}

std::unique_ptr<providers::Model> Task::open_model(providers::ResolvedModel model) const {
  return deps_.open_model ? deps_.open_model(std::move(model)) : providers::make_model_client(std::move(model));
}

boost::asio::awaitable<StopReason> Task::run(std::shared_ptr<Session> session_ptr, UserPrompt prompt,
                                             support::CancelSource& request_cancel, std::function<void()> on_started) {
  Session& session = *session_ptr;
  if (session.turn.cancel) throw AgentError(AgentError::Kind::InvalidRequest, "A prompt is already running in this session");
  auto cancel = std::make_shared<support::CancelSource>();
  session.turn.cancel = cancel;
  if (session.services.journal) {
    try {
      session.turn.journal_before = session.services.journal->size();
    } catch (const std::exception& e) {
      spdlog::error("session {}: {}", session.id, e.what());
    }
  }
  struct TurnGuard {
    Session& s;
    ~TurnGuard() {
      join_steered(s);  // steered in but never sent (a cancel, an early end): kept for the next turn
      s.turn.cancel.reset();
    }
  } guard{session};
  auto link = request_cancel.on_cancel([cancel] { cancel->cancel(); });
  // A fresh server answers session/new before its skills are loaded; a turn needs them.
  const bool skills_in = co_await deps_.engines.skills_loaded(cancel.get());
  if (!skills_in) co_return StopReason::Cancelled;
  if (auto started = session.started) {  // its SessionStart hooks' context belongs to this turn
    const bool hooks_ran = co_await started->wait(cancel.get());
    if (!hooks_ran) co_return StopReason::Cancelled;
  }
  // Its engine's extensions did not load when it opened: try again (throws their problems).
  if (!co_await deps_.sessions.complete_set_up(session_ptr, cancel.get())) co_return StopReason::Cancelled;
  session.conversation.turn_usage.reset();
  Message message = user_message_from(prompt);
  message.id = prompt.message_id.empty() ? support::random_id("msg_") : prompt.message_id;
  checkpoint_turn_start(session, message.id);  // the files its tools change are checkpointed under its id
  Prompt p{session_ptr, std::move(message), session.services.engine, {}, {}, {}, *cancel,
           session.services.journal ? session.services.journal->title() : std::string()};
  p.hooks = std::shared_ptr<const hooks::HookSet>(p.engine, &p.engine->hooks());
  p.model = open_model(providers::resolve_model(p.engine->main_config(), session.model_override()));
  // AGENTS.md files are read again every turn: edits made meanwhile count.
  co_await reread_agents_md(session, deps_.pool, cancel.get());
  p.settings.max_turn_requests = p.engine->main_config().max_turn_requests;
  p.settings.system_prompt = system_prompt(session);
  p.settings.scope.turn_id = session.id + "-t" + std::to_string(++session.conversation.turn_count);
  p.settings.hooks = p.hooks;
  p.settings.prompt = std::move(prompt);
  if (auto early = co_await before_turn(p)) co_return *early;
  if (on_started) on_started();
  co_return co_await turn(p);
}

// `/compact`, slash commands and UserPromptSubmit: each may answer the prompt by itself.
boost::asio::awaitable<std::optional<StopReason>> Task::before_turn(Prompt& p) {
  Session& session = *p.session;
  auto& loop = deps_.loop;
  if (is_compact_command(session, p.message.text)) {
    co_await loop.compact(session, *p.model, p.settings, p.cancel);
    co_return p.cancel.cancelled() ? StopReason::Cancelled : StopReason::EndTurn;
  }
  if (auto argument = permissions_command(session, p.message.text)) {
    run_permissions_command(session, *argument);
    co_return StopReason::EndTurn;
  }
  const std::string typed = p.message.text;
  std::optional<mcp::McpManager::PromptExpansion> mcp_prompt;
  if (auto mcp = session.services.mcp) mcp_prompt = co_await mcp->expand_prompt_command(typed, &p.cancel);
  if (mcp_prompt && !mcp_prompt->ok) {
    notify(session, {NoticeSeverity::Warning, "MCP prompt not used", mcp_prompt->text});
    co_return StopReason::EndTurn;
  }
  if (mcp_prompt) {  // the prompt's messages are the user's turn
    p.message.text = mcp_prompt->text;
    for (auto& [mime, data] : mcp_prompt->images) p.message.images.push_back({mime, data});
  } else {
    auto expansion = engine::expand_slash_command(session.services.view, p.message.text);
    if (expansion.kind == engine::SlashExpansion::Kind::Refused) {
      notify(session, {NoticeSeverity::Warning, "Slash command refused", expansion.error});
      co_return StopReason::EndTurn;
    }
    if (expansion.kind == engine::SlashExpansion::Kind::Expanded) p.message.text = expansion.text;
  }
  co_await read_linked_resources(p);
  if (p.hooks->has(hooks::HookEvent::UserPromptSubmit)) {
    auto input = hook_input(session, p.settings.scope);
    input.prompt = typed;
    auto outcome = co_await loop.hooks().fire(session, p.hooks, hooks::HookEvent::UserPromptSubmit, std::move(input), &p.cancel);
    if (outcome.blocked || outcome.stop_turn) {
      std::string why = outcome.blocked ? outcome.reason : outcome.stop_reason;
      notify(session, {NoticeSeverity::Warning, "Your prompt was blocked by a hook" + decided_by(outcome), why});
      co_return StopReason::EndTurn;
    }
    for (const auto& c : outcome.additional_context) session.conversation.pending_context.push_back(c);
  }
  for (const auto& c : session.conversation.pending_context) p.message.text += "\n\n<context>\n" + c + "\n</context>";
  session.conversation.pending_context.clear();
  co_return std::nullopt;
}

// Resources the editor linked in the prompt (resource_link) that an MCP server lists: read and
// given to the model as context.
boost::asio::awaitable<void> Task::read_linked_resources(Prompt& p) {
  auto mcp = p.session->services.mcp;
  if (!mcp) co_return;
  for (const auto& part : p.settings.prompt.parts) {
    const auto* link = std::get_if<UserPrompt::ResourceLink>(&part);
    if (!link || link->uri.empty()) continue;
    const std::string& uri = link->uri;
    try {
      if (auto context = co_await mcp->read_listed_resource(uri, &p.cancel)) p.message.text += "\n\n" + *context;
    } catch (const std::exception& e) {
      notify(*p.session, {NoticeSeverity::Warning, "An attached MCP resource could not be read", uri + ": " + e.what()});
    }
  }
}

// The turn's own tools (MCP, sub-agents, the plan), then the loop.
boost::asio::awaitable<StopReason> Task::turn(Prompt& p) {
  Session& session = *p.session;
  auto& loop = deps_.loop;
  std::vector<std::unique_ptr<tools::Tool>> mcp_tools;
  mcp::SessionSignIn sign_in(deps_.editor, session.id);
  co_await deps_.mcp.place_required(p.session);
  auto offer = std::make_shared<mcp::McpManager::TurnOffer>();
  if (auto mcp = session.services.mcp) {  // (the copy keeps the manager alive)
    const auto optional_wait = p.engine->main_config().mcp_startup_wait;
    boost::asio::steady_timer slow_start(co_await boost::asio::this_coro::executor);
    notice_slow_mcp_start(slow_start, session, mcp, optional_wait);
    mcp_tools = co_await mcp->tools_for_turn(&p.cancel, &sign_in, p.engine->main_config().mcp_limits, optional_wait,
                                             offer.get());
    slow_start.cancel();
    for (auto& warning : mcp->take_warnings())
      notify(session, {NoticeSeverity::Warning, "Some MCP tools were left out", std::move(warning)});
    if (!offer->late.empty() && !p.cancel.cancelled()) join_late_servers(p.settings, session, mcp, offer);
  }
  std::vector<tools::Tool*> session_mcp;
  for (auto& t : mcp_tools) session_mcp.push_back(t.get());
  SpawnAgentContext spawn{&loop, &session, p.engine, p.hooks, session_mcp, p.settings.max_turn_requests,
                          base_system_prompt(session), [this](providers::ResolvedModel m) { return open_model(std::move(m)); },
                          &deps_.sessions};
  auto spawn_tool = make_spawn_agent_tool(std::move(spawn));
  // update_plan: top-level turns only (not sub-agents).
  p.settings.extra_tools = ToolRouter::for_turn(session_mcp, std::nullopt, {spawn_tool.get(), plan_tool_.get()});
  StopReason reason = StopReason::EndTurn;
  struct TurnEndGuard {  // journaled however the turn ends (an error, a cancel)
    Task& task;
    Session& session;
    StopReason& reason;
    const std::string& title_before;
    bool finished = false;
    ~TurnEndGuard() { task.end_turn(session, finished ? stop_reason_name(reason) : "error", title_before); }
  } turn_end{*this, session, reason, p.title_before};
  reason = co_await loop.run_turn(session, std::move(p.message), *p.model, p.settings, p.cancel);
  turn_end.finished = true;
  co_return reason;
}

void Task::end_turn(Session& session, const char* stop_reason, const std::string& title_before) {
  if (!session.services.journal) {
    // No log at all (the data folder refused it: read-only, another owner's): every turn is lost.
    tell_unsaved(session, session.services.journal_unwritable);
    return;
  }
  record_turn_end(session, stop_reason);
  tell_unsaved(session, std::exchange(session.services.journal_error, {}));
  // A title the turn gave the session (the editor's side drops one it was shown already).
  auto title = session.services.journal->title();
  if (!title.empty() && title != title_before) {
    deps_.editor.emit(session.id, TitleChanged{title, session.services.journal->updated_at()});
  }
}

void Task::tell_unsaved(Session& session, const std::string& why) {
  if (why.empty()) return;
  // The user must know this turn may be missing after a restart, not only the log file.
  notify(session, {NoticeSeverity::Error, "This turn could not be saved to the session history",
                   why + "; after a restart it may be missing."});
}

}  // namespace runtime
