#pragma once
// In-memory stand-ins for the engine's two outside parties: the editor (EditorHost) and the
// model (providers::Model). Both record what they were given, so tests assert on what the editor
// was shown and what the model was told.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <any>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/protocol/editor_host.hpp"
#include "runtime/providers/model_provider.hpp"
#include "runtime/server/session_presentation.hpp"
#include "runtime/tools/tool.hpp"

namespace fakes {

class FakeEditor : public runtime::EditorHost {
 public:
  struct Emitted {
    std::string session_id;
    runtime::SessionEvent event;
  };
  std::vector<Emitted> events;
  std::vector<runtime::PermissionRequest> permission_requests;
  // Answers given in order; when they run out the prompt is answered "cancelled".
  std::deque<runtime::PermissionAnswer> answers;
  bool permission_fails = false;  // the editor answers the permission request with an error
  std::map<std::string, std::string> files;

  void emit(const std::string& session_id, runtime::SessionEvent event) override {
    // A replay's text kept as the log's JSON is kept here as what it means (the editor is sent the
    // same either way: SessionStoreTest.TheLogsTextReplaysExactlyWhatItsDecodedRecordsShow).
    if (const auto* chunk = std::get_if<runtime::JournalChunk>(&event)) event = decoded(*chunk);
    // What the server's side holds or drops (an unchanged list, a notice before the answer) is not
    // shown here either.
    if (!presentation.admit(session_id, event)) return;
    events.push_back({session_id, std::move(event)});
  }
  void session_opening(const std::string& session_id) override { presentation.opening(session_id); }
  void session_announced(const std::string& session_id) override {
    for (auto& event : presentation.announced(session_id)) emit(session_id, std::move(event));
  }
  void session_closed(const std::string& session_id) override { presentation.closed(session_id); }
  runtime::server::SessionPresentation presentation;
  static runtime::SessionEvent decoded(const runtime::JournalChunk& c) {
    const std::string id(boost::json::parse(c.message_id).as_string());
    const auto content = boost::json::parse(c.json);
    using Kind = runtime::JournalChunk::Kind;
    if (c.kind == Kind::User) return runtime::UserContent{content.as_object(), id};
    const std::string text(content.as_string());
    if (c.kind == Kind::Agent) return runtime::TextDelta{text, id};
    return runtime::ThoughtDelta{text, id};
  }
  bool can_read_files() const override { return true; }
  bool can_write_files() const override { return true; }
  bool has_terminals() const override { return false; }

  boost::asio::awaitable<runtime::PermissionAnswer> ask_permission(const std::string&, runtime::PermissionRequest request,
                                                                   support::CancelSource*) override {
    permission_requests.push_back(std::move(request));
    if (permission_fails) throw runtime::EditorError(-32603, "the editor failed");
    if (answers.empty()) co_return runtime::PermissionAnswer::Cancelled;
    auto a = answers.front();
    answers.pop_front();
    co_return a;
  }
  boost::asio::awaitable<std::string> read_text_file(const std::string&, const std::string& path,
                                                     std::optional<std::int64_t>, std::optional<std::int64_t>,
                                                     support::CancelSource*) override {
    auto it = files.find(path);
    if (it == files.end()) throw runtime::EditorError(-32002, "no such file: " + path);
    co_return it->second;
  }
  boost::asio::awaitable<void> write_text_file(const std::string&, const std::string& path, const std::string& content,
                                               support::CancelSource*) override {
    files[path] = content;
    co_return;
  }
  boost::asio::awaitable<std::string> terminal_create(const std::string&, const std::string&,
                                                      const std::vector<std::string>&, const std::string&, std::int64_t,
                                                      support::CancelSource*) override {
    throw runtime::EditorError(-32601, "no terminals");
  }
  boost::asio::awaitable<runtime::TerminalOutput> terminal_output(const std::string&, const std::string&) override {
    throw runtime::EditorError(-32601, "no terminals");
  }
  boost::asio::awaitable<runtime::TerminalExit> terminal_wait_for_exit(const std::string&, const std::string&,
                                                                       support::CancelSource*) override {
    throw runtime::EditorError(-32601, "no terminals");
  }
  boost::asio::awaitable<void> terminal_kill(const std::string&, const std::string&) override { co_return; }
  boost::asio::awaitable<void> terminal_release(const std::string&, const std::string&) override { co_return; }

  // Every event of one kind, in order.
  template <class E>
  std::vector<E> all() const {
    std::vector<E> out;
    for (const auto& e : events)
      if (auto* x = std::get_if<E>(&e.event)) out.push_back(*x);
    return out;
  }
};

// Answers each request with the next scripted response and keeps a copy of every request.
class ScriptedModel : public runtime::providers::Model {
 public:
  std::deque<runtime::providers::ModelResponse> responses;
  std::vector<std::vector<runtime::Message>> requests;  // the conversation of each request
  std::vector<std::vector<std::string>> offered_tools;
  // The next response streams its text and then the user stops it (the turn is cancelled).
  support::CancelSource* stop_after_streaming = nullptr;

  ScriptedModel() { model_.model = "scripted"; }
  const runtime::providers::ResolvedModel& model() const override { return model_; }

  boost::asio::awaitable<runtime::providers::ModelResponse> stream(const runtime::providers::ModelRequest& req,
                                                                   runtime::providers::StreamCallbacks& cb,
                                                                   support::CancelSource*) override {
    requests.push_back(*req.messages);
    std::vector<std::string> names;
    for (const auto& t : req.tools) names.push_back(t.name);
    offered_tools.push_back(std::move(names));
    if (responses.empty()) throw runtime::providers::ModelError(runtime::providers::ModelError::Kind::Server, "no more scripted responses");
    auto r = responses.front();
    responses.pop_front();
    if (!r.text.empty() && cb.on_text) cb.on_text(r.text);
    if (auto* stop = std::exchange(stop_after_streaming, nullptr)) {
      stop->cancel();
      throw runtime::providers::ModelError(runtime::providers::ModelError::Kind::Cancelled, "cancelled");
    }
    co_return r;
  }

  // A response that calls one tool.
  static runtime::providers::ModelResponse calls(std::string id, std::string tool, std::string arguments) {
    runtime::providers::ModelResponse r;
    r.tool_calls.push_back({std::move(id), std::move(tool), std::move(arguments)});
    r.finish = runtime::FinishReason::ToolUse;
    return r;
  }
  static runtime::providers::ModelResponse says(std::string text) {
    runtime::providers::ModelResponse r;
    r.text = std::move(text);
    return r;
  }

  // The text of the tool result for `call_id` in the last request.
  std::string tool_result(const std::string& call_id) const {
    for (const auto& m : requests.back())
      if (m.role == runtime::Message::Role::Tool && m.tool_call_id == call_id) return m.text;
    return "(no result for " + call_id + ")";
  }

 private:
  runtime::providers::ResolvedModel model_;
};

// Runs a coroutine to completion on a fresh io_context and returns its result.
template <class T>
T run(boost::asio::io_context& ioc, boost::asio::awaitable<T> a) {
  auto f = boost::asio::co_spawn(ioc, std::move(a), boost::asio::use_future);
  ioc.restart();
  ioc.run();
  return f.get();
}

}  // namespace fakes

namespace fakes {

// A ToolContext for running a tool outside the router, everything allowed (run_allowed).
class AllowingContext : public runtime::tools::ToolContext {
 public:
  AllowingContext(runtime::EditorHost& host, boost::asio::thread_pool& pool) : host_(host), pool_(pool) {}
  const runtime::ToolEnv& env() override { return env_; }
  support::CancelSource& cancel() override { return cancel_; }
  boost::asio::thread_pool& blocking_pool() override { return pool_; }
  const std::string& tool_call_id() override { return id_; }
  runtime::Executor& executor() override {
    if (!executor_) throw std::logic_error("no executor in this context");
    return *executor_;
  }
  std::any& prepared() override { return prepared_; }
  boost::asio::awaitable<boost::json::object> elicit(boost::json::object request) override {
    co_return co_await host_.elicit(env_.session_id, id_, std::move(request), &cancel_);
  }
  void update(runtime::ToolCallFields fields) override { updates.push_back(std::move(fields)); }
  void show_plan(std::vector<runtime::PlanEntry> entries) override { plans.push_back(std::move(entries)); }

  runtime::ToolEnv env_{"ses_test", "/", runtime::Mode::FullAuto};
  runtime::Executor* executor_ = nullptr;
  std::vector<runtime::ToolCallFields> updates;
  std::vector<std::vector<runtime::PlanEntry>> plans;
  std::vector<runtime::tools::ApprovalRequest> requests;  // what each call declared (refused ones too)

 private:
  runtime::EditorHost& host_;
  boost::asio::thread_pool& pool_;
  support::CancelSource cancel_;
  std::string id_ = "call_1";
  std::any prepared_;
};

// Runs a tool as the router does when the policy allows: approval (its refusal ends the call),
// prepare, run.
inline boost::asio::awaitable<runtime::tools::ToolResult> run_allowed(runtime::tools::Tool& tool, AllowingContext& ctx,
                                                                      boost::json::object args) {
  auto request = co_await tool.approval(ctx, args);
  ctx.requests.push_back(request);
  if (request.refusal) co_return *request.refusal;
  if (auto ended = co_await tool.prepare(ctx, args, request)) co_return *ended;
  ctx.requests.back() = request;
  co_return co_await tool.run(ctx, args);
}

}  // namespace fakes
