#include "runtime/agent/tool_router.hpp"

#include "runtime/agent/checkpointing.hpp"


#include <spdlog/spdlog.h>

#include "runtime/agent/approval.hpp"
#include "runtime/agent/command_sandbox.hpp"
#include "runtime/agent/containment.hpp"
#include "runtime/agent/remote/executor_files.hpp"
#include "runtime/agent/journal.hpp"
#include "runtime/config/credentials.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/protocol/executor_paths.hpp"
#include "support/run_blocking.hpp"

#include <boost/asio/this_coro.hpp>

#include <algorithm>

namespace runtime {

namespace json = boost::json;
using containment::Place;
using approval::Verdict;
using tools::Permission;

namespace {

// What the session may touch without asking (DESIGN §11): its folders (the cwd and the editor's
// additionalDirectories); for reading, also the folders of the skills it sees (the model must
// read a skill to use it) and its AGENTS.md files themselves, not their folders (a dotfiles
// repository in ~ must not open all of ~).
containment::Scope scope_of(const Session& session) {
  containment::Scope scope;
  scope.roots.push_back(session.settings.cwd);
  scope.roots.insert(scope.roots.end(), session.settings.additional_roots.begin(), session.settings.additional_roots.end());
  for (const auto& skill : session.services.view.skills) scope.read_roots.push_back(skill->file.parent_path());
  for (const auto& f : session.services.view.agents_md) scope.read_files.push_back(f.path);
  for (const auto& f : session.conversation.agents_md_included) scope.read_files.push_back(f);
  containment::guard_config_root(scope, session.services.engine ? session.services.engine->options().config_root : config::config_root());
  return scope;
}

containment::Access access_of(Permission p) {
  return p == Permission::Read ? containment::Access::Read : containment::Access::Write;
}

// Why a prompt is asked although the mode would not ask, for its title and content.
std::string why_asked(Place place) {
  switch (place) {
    case Place::Outside: return "outside the session's folders";
    case Place::ConfigRoot: return "in openvaala's config folder, whose hooks run code";
    default: return {};
  }
}

}  // namespace

// Everything one call carries through the pipeline.
struct ToolRouter::Call {
  Session& session;
  const ToolCall& call;
  const TurnSettings& settings;
  support::CancelSource& cancel;
  tools::Tool* tool = nullptr;
  json::object args;
  bool args_ok = false;
  tools::ToolDescription desc;
  hooks::HookInput hook_input;
  bool blocked = false;       // a PreToolUse hook refused the call; `result` says why
  bool hook_allowed = false;  // a PreToolUse hook answered "allow"
  tools::ToolResult result;
  std::vector<std::string> notes;  // what hooks did, shown in the editor's tool call
  std::string model_context;       // appended to the result the model gets
  bool stop_turn = false;
  ToolEnv env;                         // the session's, with the call's executor and its working directory
  std::shared_ptr<Executor> executor;  // set for tools that run on one
  std::shared_ptr<Executor> tool_io;   // what the tool is handed: on local the editor's fs/terminal where offered
  std::any prepared;                   // the tool's own, from approval() to run()
  tools::Permission permission = tools::Permission::None;  // approved, with the files an edit changes:
  std::vector<std::filesystem::path> edits;                // what the file checkpoint keeps
};

// What a running tool may do: its narrow environment, its executor, progress in the editor.
class ToolRouter::Context : public tools::ToolContext {
 public:
  Context(ToolRouter& router, Call& c) : router_(router), c_(c) {}

  const ToolEnv& env() override { return c_.env; }
  support::CancelSource& cancel() override { return c_.cancel; }
  boost::asio::thread_pool& blocking_pool() override { return router_.hooks_.pool(); }
  const std::string& tool_call_id() override { return c_.call.id; }
  Executor& executor() override {
    if (!c_.tool_io) throw std::logic_error("tool " + c_.tool->name() + " has no executor");
    return *c_.tool_io;
  }
  std::any& prepared() override { return c_.prepared; }
  boost::asio::awaitable<json::object> elicit(json::object request) override {
    co_return co_await router_.hooks_.host().elicit(c_.session.id, c_.call.id, std::move(request), &c_.cancel);
  }

  void update(ToolCallFields fields) override {
    router_.hooks_.host().emit(c_.session.id, ToolCallUpdate{c_.call.id, std::move(fields)});
  }

  void show_plan(std::vector<PlanEntry> entries) override {
    record(c_.session, sessions::PlanUpdate{entries});
    router_.hooks_.host().emit(c_.session.id, PlanShown{std::move(entries)});
  }

 private:
  ToolRouter& router_;
  Call& c_;
};

// The approval step (DESIGN §11), between the hooks and the tool's run: what the tool declares,
// where its files lie, the policy, the user's answer. Only an allowed call is marked in progress
// and runs; a refusal is the call's result.
boost::asio::awaitable<bool> ToolRouter::approve(Call& c, Context& ctx) {
  auto request = co_await c.tool->approval(ctx, c.args);
  if (request.refusal) {
    c.result = std::move(*request.refusal);
    co_return false;
  }
  const Placed placed = co_await place_of(c, access_of(request.permission), request.paths);
  const Place place = placed.place;
  // Reads that build the preview come before the question only for files inside the roots.
  const bool prepare_first = place == Place::Inside;
  if (prepare_first) {
    if (!co_await prepare(c, ctx, request)) co_return false;
  }
  const Verdict verdict = co_await decide(c, request, placed);
  switch (verdict) {
    case Verdict::Allow: break;
    case Verdict::Forbid: c.result = tools::forbidden_result(); co_return false;
    case Verdict::Cancelled: throw tools::ToolCancelled();
    case Verdict::Reject:
    case Verdict::Ask:  // (decide asks: never left open)
      c.result = request.refused_text.empty() ? tools::refused_result(c.env.mode) : tools::error_result(request.refused_text);
      co_return false;
  }
  if (!prepare_first) {
    if (!co_await prepare(c, ctx, request)) co_return false;
  }
  c.permission = request.permission;
  if (request.permission == Permission::Edit) c.edits = request.paths;
  ToolCallFields running;
  running.status = ToolStatus::InProgress;
  ctx.update(std::move(running));
  co_return true;
}

// The tool's reads for the question (Tool::prepare); false when they ended the call.
boost::asio::awaitable<bool> ToolRouter::prepare(Call& c, Context& ctx, tools::ApprovalRequest& request) {
  auto ended = co_await c.tool->prepare(ctx, c.args, request);
  if (ended) c.result = std::move(*ended);
  co_return !ended;
}

// The policy's verdict, and the user's answer when it says ask.
boost::asio::awaitable<Verdict> ToolRouter::decide(Call& c, const tools::ApprovalRequest& request, const Placed& placed) {
  std::vector<std::filesystem::path> roots{c.session.settings.cwd};
  roots.insert(roots.end(), c.session.settings.additional_roots.begin(), c.session.settings.additional_roots.end());
  const approval::Memory memory = approval::memory_of(request, placed.place, roots, placed.resolved);
  approval::Request policy{c.session.settings.mode, request.permission, c.hook_allowed,
                           approval::remembered(c.session.remembered_permissions, memory.keys), placed.place};
  const Verdict verdict = approval::decide(policy);
  if (verdict != Verdict::Ask) co_return verdict;
  co_return co_await ask(c, request.preview, why_asked(placed.place), memory);
}

boost::asio::awaitable<Verdict> ToolRouter::ask(Call& c, std::vector<ToolContent> preview, const std::string& why,
                                                const approval::Memory& memory) {
  PermissionRequest request{c.call.id, c.tool->name(), memory.label, {}};
  request.call.title = why.empty() ? c.desc.title : c.desc.title + " (" + why + ")";
  request.call.kind = c.desc.kind;
  request.call.status = ToolStatus::Pending;
  request.call.locations = c.desc.locations;
  request.call.raw_input = json::value(c.args);
  if (!why.empty()) preview.insert(preview.begin(), TextContent{"Asking because this is " + why + "."});
  if (!preview.empty()) request.call.content = std::move(preview);
  PermissionAnswer answer = PermissionAnswer::Cancelled;
  try {
    answer = co_await hooks_.host().ask_permission(c.session.id, std::move(request), &c.cancel);
  } catch (const EditorError& e) {
    spdlog::warn("permission request failed: {}", e.what());
    co_return c.cancel.cancelled() ? Verdict::Cancelled : Verdict::Reject;
  }
  if (c.cancel.cancelled()) co_return Verdict::Cancelled;
  auto meaning = approval::interpret(answer);
  if (meaning.remember) remember_answer(c.session, memory.keys, *meaning.remember);
  co_return meaning.verdict;
}

// Where the files lie. Resolving paths touches the disk: off the connection's thread.
boost::asio::awaitable<ToolRouter::Placed> ToolRouter::place_of(Call& c, containment::Access access,
                                                               std::vector<std::filesystem::path> paths) {
  if (paths.empty()) co_return Placed{};
  auto scope = scope_of(c.session);
  if (!c.env.on_local()) {
    auto* there = dynamic_cast<ExecutorPaths*>(c.executor.get());
    if (!there) co_return Placed{Place::Outside, {}};  // an executor that cannot say where its paths lie
    // A virtual executor's files are local ones: judged as such, its working directory a root.
    std::optional<std::filesystem::path> root;
    try {
      root = there->local_file(c.env.cwd.string());
      for (auto& p : paths)
        if (root) p = *there->local_file(p.string());
    } catch (const ExecutorError&) {
      co_return Placed{Place::Outside, {}};  // not one of its files at all
    }
    if (!root) co_return co_await place_remote(c, *there, access, paths);
    scope.roots.push_back(*root);
  }
  auto job = [scope = std::move(scope), access, paths = std::move(paths)] {
    Placed placed{containment::classify(scope, access, paths), {}};
    for (const auto& p : paths) placed.resolved.push_back(containment::resolve(p));
    return placed;
  };
  auto resolving = support::run_blocking(hooks_.pool(), std::move(job));
  co_return co_await std::move(resolving);
}

// Another machine's paths (ssh): resolved there with the user's config root there (its
// credentials and tokens are secrets, its hooks run code); its working directory is the root.
// A path that cannot be resolved is outside.
boost::asio::awaitable<ToolRouter::Placed> ToolRouter::place_remote(Call& c, ExecutorPaths& there_paths,
                                                                   containment::Access access,
                                                                   const std::vector<std::filesystem::path>& paths) {
  std::vector<std::string> asked;
  for (const auto& p : paths) asked.push_back(p.string());
  RealPaths real;
  try {
    real = co_await there_paths.real_paths(asked, &c.cancel);
  } catch (const ExecutorError& e) {
    spdlog::warn("containment: {}; judged as outside", e.what());
    co_return Placed{Place::Outside, {}};
  }
  containment::Scope there;
  there.roots = {c.env.cwd};
  if (!real.config_root.empty()) containment::guard_config_root(there, real.config_root);
  std::vector<std::filesystem::path> resolved(real.paths.begin(), real.paths.end());
  const Place place = containment::classify_resolved(there, access, resolved);
  co_return Placed{place, std::move(resolved)};
}

ToolRouter::ToolRouter(HookRuntime& hooks, std::vector<std::unique_ptr<tools::Tool>> builtins)
    : hooks_(hooks), builtins_(std::move(builtins)) {
  for (const auto& t : builtins_) by_name_.emplace(t->name(), t.get());
}

std::vector<std::unique_ptr<tools::Tool>> ToolRouter::builtins() {
  std::vector<std::unique_ptr<tools::Tool>> t;
  t.push_back(tools::make_read_file_tool());
  t.push_back(tools::make_apply_patch_tool());
  t.push_back(tools::make_bash_tool());
  return t;
}

std::vector<tools::Tool*> ToolRouter::for_turn(const std::vector<tools::Tool*>& mcp_tools,
                                               const std::optional<std::vector<std::string>>& mcp_servers,
                                               std::vector<tools::Tool*> extras) {
  std::vector<tools::Tool*> out;
  for (auto* t : mcp_tools) {
    // mcp__<id>__<tool>: keep the servers the agent selects (absent = all).
    if (!mcp_servers) {
      out.push_back(t);
      continue;
    }
    for (const auto& id : *mcp_servers)
      if (t->name().rfind("mcp__" + id + "__", 0) == 0) out.push_back(t);
  }
  out.insert(out.end(), extras.begin(), extras.end());
  return out;
}

std::vector<ToolSpec> ToolRouter::specs(const TurnSettings& settings) const {
  std::vector<ToolSpec> out;
  for (const auto& t : builtins_) out.push_back(t->spec());
  for (auto* t : settings.extra_tools) out.push_back(t->spec());
  return out;
}

tools::Tool* ToolRouter::find(const std::string& name, const TurnSettings& settings) const {
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  for (auto* t : settings.extra_tools)
    if (t->name() == name) return t;
  return nullptr;
}

boost::asio::awaitable<ToolRouter::Outcome> ToolRouter::dispatch(Session& session, const ToolCall& call,
                                                                 const TurnSettings& settings,
                                                                 support::CancelSource& cancel) {
  Call c{session, call, settings, cancel};
  c.tool = find(call.name, settings);
  json::error_code ec;
  auto args = json::parse(call.arguments.empty() ? "{}" : call.arguments, ec);
  c.args_ok = !ec && args.is_object();
  if (c.args_ok) c.args = std::move(args.as_object());
  c.hook_input = hook_input(session, settings.scope);
  c.hook_input.tool_name = call.name;
  c.hook_input.tool_use_id = call.id;

  announce(c);
  if (c.tool && c.args_ok) co_await pre_tool_use(c);
  if (!c.blocked) co_await run(c);
  co_return finish(c);
}

void ToolRouter::announce(Call& c) {
  if (c.tool) c.desc = c.tool->describe(c.args, c.session.tool_env());
  else c.desc.title = c.call.name;
  ToolCallFields f;
  f.title = c.desc.title;
  f.name = c.call.name;
  f.kind = c.desc.kind;
  f.status = ToolStatus::Pending;
  f.locations = c.desc.locations;
  if (c.args_ok) f.raw_input = json::value(c.args);
  record(c.session, sessions::ToolCallState{c.call.id, f});
  hooks_.host().emit(c.session.id, ToolCallBegin{c.call.id, std::move(f)});
}

namespace {
// The executor a tool's hooks run on: the tool's (its `executor` argument, else the session's);
// tools that run nowhere in particular (MCP, spawn_agent) use the session's.
std::string hook_executor(const tools::Tool* tool, const json::object& args, const Session& session) {
  return tool && tool->runs_on_executor() ? tools::executor_of(args, session.tool_env()) : session.settings.executor;
}

// A hook's continue: false ends the turn; the user learns why.
void note_stop(const Session& session, const hooks::HookOutcome& o, const char* event, bool& stop) {
  if (!o.stop_turn) return;
  stop = true;
  notify(session, {NoticeSeverity::Info, std::string("A ") + event + " hook" + decided_by(o) + " ended the turn",
                   o.stop_reason});
}
}  // namespace

boost::asio::awaitable<void> ToolRouter::pre_tool_use(Call& c) {
  if (!c.settings.hooks || !c.settings.hooks->has(hooks::HookEvent::PreToolUse)) co_return;
  auto input = c.hook_input;
  input.tool_input = c.args;
  // A tool's hooks run where the tool does (DESIGN §10).
  auto pre = co_await hooks_.fire(c.session, c.settings.hooks, hooks::HookEvent::PreToolUse, std::move(input), &c.cancel,
                                  hook_executor(c.tool, c.args, c.session));
  for (const auto& extra : pre.additional_context) c.model_context += "\n\n" + extra;
  note_stop(c.session, pre, "PreToolUse", c.stop_turn);
  if (pre.blocked || pre.permission == hooks::PermissionDecision::Deny) {
    c.blocked = true;
    std::string reason = pre.blocked ? pre.reason : pre.permission_reason;
    c.result = tools::error_result("Blocked by a PreToolUse hook" + decided_by(pre) + ": " +
                                   (reason.empty() ? std::string("no reason given") : reason));
    co_return;
  }
  if (pre.updated_input && pre.updated_input->is_object()) {
    c.args = pre.updated_input->as_object();
    c.notes.push_back("Input rewritten by a PreToolUse hook" + decided_by(pre) + ".");
    c.desc = c.tool->describe(c.args, c.session.tool_env());
    ToolCallFields f;
    f.title = c.desc.title;
    f.locations = c.desc.locations;
    f.raw_input = json::value(c.args);
    f.content = std::vector<ToolContent>{TextContent{c.notes.back()}};
    hooks_.host().emit(c.session.id, ToolCallUpdate{c.call.id, std::move(f)});
  }
  c.hook_allowed = pre.permission == hooks::PermissionDecision::Allow;
}

boost::asio::awaitable<void> ToolRouter::run(Call& c) {
  if (!c.tool) {
    c.result = tools::error_result("There is no tool named '" + c.call.name + "'.");
    co_return;
  }
  if (!c.args_ok) {
    c.result = tools::error_result("The arguments of " + c.call.name + " are not a JSON object: " + c.call.arguments);
    co_return;
  }
  if (c.cancel.cancelled()) {
    c.result = tools::error_result("Cancelled by the user.");
    co_return;
  }
  c.env = c.session.tool_env();
  bool ready = true;
  if (c.tool->runs_on_executor()) ready = co_await connect_executor(c);  // else the result says why
  if (c.env.on_local()) c.env.sandbox = command_sandbox_for(c.session);
  if (ready) {
    Context ctx(*this, c);
    try {
      if (co_await approve(c, ctx)) {
        auto checkpoint = co_await FileCheckpoint::take(c.session, c.env, c.tool->name(), c.permission, c.edits, hooks_.pool());
        c.result = co_await c.tool->run(ctx, c.args);
        co_await checkpoint.finish();
      }
    } catch (const tools::ToolCancelled&) {
      c.result = tools::error_result("Cancelled by the user.");
    } catch (const std::exception& e) {
      spdlog::error("tool {} failed: {}", c.call.name, e.what());
      c.result = tools::error_result(std::string("The tool failed: ") + e.what());
    }
  }
  // Another executor's chain after its first use; deeper AGENTS.md files after a read (on the
  // local default through the engine, elsewhere through the executor).
  if (ready && c.executor && !c.cancel.cancelled())
    c.model_context += co_await agents_md_on_first_use(c.session, *c.executor, hooks_.pool(), &c.cancel);
  const bool local_default = c.env.on_local() && c.session.settings.executor == c.env.executor;
  const auto path = c.result.is_error ? std::nullopt : c.tool->file_read(c.args);
  if (path && local_default)
    c.model_context += agents_md_after_read(c.session, *path);
  else if (path && ready && c.executor && !c.cancel.cancelled())
    c.model_context += co_await agents_md_after_read_on(c.session, *c.executor, c.env.cwd, *path, &c.cancel);
  co_await post_tool_use(c);
}

// The call's executor (its `executor` argument, else the session's), connected, its working
// directory the call's; false with the error as the result when it cannot be used.
boost::asio::awaitable<bool> ToolRouter::connect_executor(Call& c) {
  c.env.executor = tools::executor_of(c.args, c.env);
  if (c.session.services.executors) c.executor = use_executor(c.session, c.env.executor);
  else if (c.env.on_local()) {  // a session without the server's executors (tests): local still works
    auto io = co_await boost::asio::this_coro::executor;
    c.executor = executors::make_local_executor({io, &hooks_.pool()}, c.session.settings.cwd);
  }
  if (!c.executor) {
    std::string ids;
    if (c.session.services.executors)
      for (const auto& id : c.session.services.executors->ids()) ids += (ids.empty() ? "" : ", ") + id;
    c.result = tools::error_result("There is no executor '" + c.env.executor + "' (available: " + ids + ").");
    co_return false;
  }
  try {
    c.env.cwd = co_await c.executor->working_directory(&c.cancel);
  } catch (const ExecutorError& e) {
    c.result = tools::error_result(c.cancel.cancelled() ? std::string("Cancelled by the user.") : e.what());
    co_return false;
  }
  // On local the tool reads, writes and runs through the editor where it offers that.
  c.tool_io = c.env.on_local() ? hooks_.host().local_for_tools(c.session.id, c.executor) : c.executor;
  co_return true;
}

boost::asio::awaitable<void> ToolRouter::post_tool_use(Call& c) {
  if (!c.settings.hooks || !c.settings.hooks->has(hooks::HookEvent::PostToolUse) || c.cancel.cancelled()) co_return;
  auto input = c.hook_input;
  input.tool_input = c.args;
  input.tool_response = json::object{{"output", c.result.text}, {"is_error", c.result.is_error}};
  auto post = co_await hooks_.fire(c.session, c.settings.hooks, hooks::HookEvent::PostToolUse, std::move(input), &c.cancel,
                                   hook_executor(c.tool, c.args, c.session));
  if (post.blocked) {
    const std::string objection = "A PostToolUse hook" + decided_by(post) + " objected: " + post.reason;
    c.model_context += "\n\n" + objection;
    c.notes.push_back(objection);
  }
  for (const auto& extra : post.additional_context) c.model_context += "\n\n" + extra;
  note_stop(c.session, post, "PostToolUse", c.stop_turn);
}

// The call's end: its completed state and the result the model gets, journaled together (one
// write on every call's path), then the completed update.
ToolRouter::Outcome ToolRouter::finish(Call& c) {
  std::vector<ToolContent> content;
  for (const auto& n : c.notes) content.push_back(TextContent{n});
  for (auto& item : c.result.content) content.push_back(std::move(item));
  ToolCallFields done;
  done.status = c.result.is_error ? ToolStatus::Failed : ToolStatus::Completed;
  done.content = std::move(content);
  // rawOutput is the result as the model got it, for clients that show or use it as such.
  done.raw_output = c.result.raw_output.is_null() ? json::value(json::object{{"output", c.result.text}}) : c.result.raw_output;
  ToolCallFields kept = done;
  if (!c.desc.title.empty()) kept.title = c.desc.title;

  Outcome out;
  out.result.role = Message::Role::Tool;
  out.result.tool_call_id = c.call.id;
  out.result.text = std::move(c.result.text) + c.model_context;
  out.result.is_error = c.result.is_error;
  out.stop_turn = c.stop_turn;
  std::vector<sessions::RecordBody> records;
  records.emplace_back(sessions::ToolCallState{c.call.id, std::move(kept)});
  records.emplace_back(sessions::ToolResult{out.result});
  record_all(c.session, std::move(records));
  hooks_.host().emit(c.session.id, ToolCallUpdate{c.call.id, std::move(done)});
  return out;
}

// AGENTS.md files between the session's folder and a deeper file the agent just read join the
// context once, right after the read.
std::string ToolRouter::agents_md_after_read(Session& session, const std::string& path) {
  auto files = engine::agents_md_for_read(session.services.view, path, session.conversation.agents_md_included);
  if (files.empty()) return {};
  for (const auto& f : files) session.conversation.agents_md_included.insert(f.path);
  return "\n\n" + engine::agents_md_prompt(files);
}

}  // namespace runtime
