// Context compaction: the conversation so far becomes a summary the model writes.
#include "runtime/agent/agent_loop.hpp"
#include "runtime/agent/journal.hpp"
#include "support/text.hpp"

namespace runtime {

namespace {
constexpr const char* kSummaryRequest =
    "Summarise this conversation so far so that you can continue the work from the summary alone: the user's "
    "goals and instructions, decisions made, files read and changed (with paths), commands run and their "
    "outcomes, and what remains to do. Be complete but concise. Answer with the summary only.";

// The most of one tool result the summary request carries: a result too large for the context
// (a huge MCP answer, from before its limit or with the limit raised) fails every turn, and
// would fail /compact too if it went whole. The start of a result is what a summary needs.
constexpr std::size_t kSummaryToolResultBytes = 16 * 1024;

void shrink_for_summary(Message& m) {
  if (m.role != Message::Role::Tool || m.text.size() <= kSummaryToolResultBytes) return;
  const std::size_t total = m.text.size();
  m.text.resize(support::utf8_prefix_length(m.text, kSummaryToolResultBytes));
  m.text += "\n[... " + std::to_string(total - m.text.size()) + " more bytes of this tool result left out of the summary request]";
}

// Deeper AGENTS.md files entered the context with reads; they would be lost with those reads.
std::vector<engine::AgentsMdFile> deeper_agents_md(const Session& session) {
  std::vector<engine::AgentsMdFile> deeper;
  for (const auto& path : session.conversation.agents_md_included) {
    bool in_chain = false;
    for (const auto& f : session.services.view.agents_md) in_chain = in_chain || f.path == path;
    if (in_chain) continue;
    for (auto& f : engine::agents_md_for_read(session.services.view, path, {}))
      if (f.path == path) deeper.push_back(std::move(f));
  }
  return deeper;
}
}  // namespace

std::int64_t AgentLoop::context_window(const providers::Model& model) {
  return model.model().provider.context_window.value_or(128000);
}

bool AgentLoop::needs_compaction(const Session& session, const providers::Model& model) {
  return session.conversation.context_tokens > context_window(model) * 8 / 10 && session.conversation.history.size() >= 2;
}

boost::asio::awaitable<bool> AgentLoop::compact(Session& session, providers::Model& model, const TurnSettings& settings,
                                                support::CancelSource& cancel) {
  if (session.conversation.history.empty()) co_return false;
  const std::string id = "compaction-" + std::to_string(++session.conversation.compactions);
  auto& host = hooks_.host();
  const std::string sid = session.id;
  auto ended = [&](CompactionStatus status, std::string error) {
    host.emit(sid, CompactionProgress{id, status, std::nullopt, std::move(error), 0});
  };
  host.emit(sid, CompactionProgress{id, CompactionStatus::InProgress, std::nullopt, {}, 0});
  std::vector<Message> request_history = session.conversation.history;
  for (auto& m : request_history) shrink_for_summary(m);
  Message ask;
  ask.role = Message::Role::User;
  ask.text = kSummaryRequest;
  request_history.push_back(std::move(ask));
  providers::ModelRequest req{model.model().model, settings.system_prompt, &request_history, {}, {}};
  // The summary streams to the editor's compaction view (if it has one), never into the chat.
  providers::StreamCallbacks callbacks{
      [&host, &id, &sid](std::string_view text) { host.emit(sid, CompactionSummaryDelta{id, std::string(text)}); },
      [](std::string_view) {}, nullptr};
  providers::ModelResponse response;
  try {
    response = co_await model.stream(req, callbacks, &cancel);
  } catch (const providers::ModelError& e) {
    if (cancel.cancelled())
      ended(CompactionStatus::Cancelled, {});
    else
      ended(CompactionStatus::Failed, e.what());
    co_return false;
  }
  if (response.text.empty()) {
    ended(CompactionStatus::Failed, "the model answered with no summary");
    co_return false;
  }
  Message summary;
  summary.role = Message::Role::User;
  summary.text = "This conversation was compacted. Summary of everything before this point:\n\n" + response.text;
  if (auto deeper = deeper_agents_md(session); !deeper.empty()) summary.text += "\n\n" + engine::agents_md_prompt(deeper);
  const auto before = session.conversation.history.size();
  session.conversation.history.clear();
  record(session, sessions::Compaction{response.text, {summary}, 0, id});
  session.conversation.history.push_back(std::move(summary));
  session.conversation.context_tokens = response.usage.output_tokens;
  host.emit(sid, CompactionProgress{id, CompactionStatus::Completed, std::nullopt, {}, before});
  co_return true;
}

}  // namespace runtime
