// Context compaction: the conversation so far becomes a summary the model writes.
#include "runtime/agent/agent_loop.hpp"
#include "runtime/agent/journal.hpp"

namespace runtime {

namespace {
constexpr const char* kSummaryRequest =
    "Summarise this conversation so far so that you can continue the work from the summary alone: the user's "
    "goals and instructions, decisions made, files read and changed (with paths), commands run and their "
    "outcomes, and what remains to do. Be complete but concise. Answer with the summary only.";

// Deeper AGENTS.md files entered the context with reads; they would be lost with those reads.
std::vector<engine::AgentsMdFile> deeper_agents_md(const Session& session) {
  std::vector<engine::AgentsMdFile> deeper;
  for (const auto& path : session.agents_md_included) {
    bool in_chain = false;
    for (const auto& f : session.view.agents_md) in_chain = in_chain || f.path == path;
    if (in_chain) continue;
    for (auto& f : engine::agents_md_for_read(session.view, path, {}))
      if (f.path == path) deeper.push_back(std::move(f));
  }
  return deeper;
}
}  // namespace

std::int64_t AgentLoop::context_window(const providers::Model& model) {
  return model.model().provider.context_window.value_or(128000);
}

bool AgentLoop::needs_compaction(const Session& session, const providers::Model& model) {
  return session.context_tokens > context_window(model) * 8 / 10 && session.history.size() >= 2;
}

boost::asio::awaitable<bool> AgentLoop::compact(Session& session, providers::Model& model, const TurnSettings& settings,
                                                support::CancelSource& cancel) {
  if (session.history.empty()) co_return false;
  notify(host(), session, "Compacting the conversation: the model is summarising it to free context.");
  std::vector<Message> request_history = session.history;
  Message ask;
  ask.role = Message::Role::User;
  ask.text = kSummaryRequest;
  request_history.push_back(std::move(ask));
  providers::ModelRequest req{model.model().model, settings.system_prompt, &request_history, {}, {}};
  providers::StreamCallbacks silent{[](std::string_view) {}, [](std::string_view) {}, nullptr};
  providers::ModelResponse response;
  try {
    response = co_await model.stream(req, silent, &cancel);
  } catch (const providers::ModelError& e) {
    if (!cancel.cancelled()) notify(host(), session, std::string("Compaction failed, the conversation is unchanged: ") + e.what());
    co_return false;
  }
  if (response.text.empty()) co_return false;
  Message summary;
  summary.role = Message::Role::User;
  summary.text = "This conversation was compacted. Summary of everything before this point:\n\n" + response.text;
  if (auto deeper = deeper_agents_md(session); !deeper.empty()) summary.text += "\n\n" + engine::agents_md_prompt(deeper);
  const auto before = session.history.size();
  session.history.clear();
  record(session, sessions::Compaction{response.text, {summary}, 0});
  session.history.push_back(std::move(summary));
  session.context_tokens = response.usage.output_tokens;
  notify(host(), session, "Compacted " + std::to_string(before) + " messages into a summary.");
  co_return true;
}

}  // namespace runtime
