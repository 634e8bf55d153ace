#pragma once
// One conversation with the editor, in layers (as Codex's SessionConfiguration / SessionState /
// SessionServices / TurnContext): its settings (what is journaled and set in the editor), its
// conversation, the services it runs with, and the turn in flight. What the editor was last shown
// of it is not here: runtime/server/session_presentation.hpp keeps that.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bridge/mcp/server_spec.hpp"
#include "runtime/protocol/modes.hpp"
#include "runtime/protocol/tool_env.hpp"
#include "support/cancellation.hpp"
#include "support/one_shot_event.hpp"
#include "runtime/protocol/conversation.hpp"
#include "runtime/protocol/events.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/executors/executors.hpp"

namespace runtime {

class EditorHost;
namespace mcp {
class McpManager;
}
namespace sessions {
class SessionWriter;
class CheckpointStore;
}

struct ClientInstructions {
  std::string text;       // empty: none
  bool replace = false;   // ACP mode "override" (else "append")
};

// A change of the journaled settings (session/set_mode, set_config_option, a load's records):
// the fields set are changed, the others stay.
struct SettingsChange {
  std::optional<Mode> mode;
  std::optional<std::string> agent_name;
  std::optional<std::string> model;
  std::optional<std::string> executor;
  std::optional<std::string> reasoning_effort;
};

// Where the session works and how: its roots, and the settings the editor changes and the journal
// keeps (each change is a record: journal.hpp's change_settings).
struct SessionSettings {
  std::filesystem::path cwd;
  // More folders the editor made part of the session (ACP additionalDirectories): roots like the
  // cwd for what may be touched without asking, and MCP roots. Not saved: load and resume set them anew.
  std::vector<std::filesystem::path> additional_roots;
  // The editor's own instructions (ACP systemPrompt): added after ours, or replacing our default
  // instructions (the environment stays). Not saved, like additional_roots.
  ClientInstructions client_instructions;
  Mode mode = Mode::Default;
  std::string agent_name;
  // The model picked in the editor ("<provider>/<model>"); empty: the agent's, else the configured one.
  std::string model;
  // The default executor of its tools (DESIGN §10): session/new's _meta, the agent's, config.yaml's
  // default_executor, else local; switched in the editor.
  std::string executor = "local";
  // The thought level picked in the editor (OpenAI reasoning_effort); empty: the model's default.
  std::string reasoning_effort;

  void apply(const SettingsChange& change);
};

// What was said and what it cost.
struct Conversation {
  std::vector<Message> history;
  int turn_count = 0;
  int compactions = 0;  // started so far (journaled ones counted on load): numbers compaction ids
  // Tokens in the context at the last model response (input + output), for usage_update and
  // compaction; and the totals of the session.
  std::int64_t context_tokens = 0;
  Usage total_usage;
  // What the session's priced model requests cost, by currency (the model's `price`).
  std::map<std::string, double> cost;
  // Tokens of the prompt turn in flight (or the last one); unset: the provider reported none.
  std::optional<Usage> turn_usage;
  // AGENTS.md files already given to the model (each enters the context once).
  std::set<std::filesystem::path> agents_md_included;
  // Context from hooks (SessionStart) waiting for the next user message.
  std::vector<std::string> pending_context;
};

// Required configured MCP servers that could not be placed on their executor (SessionMcp::make): each
// fails every turn until it can (SessionMcp::place_required).
struct LeftOutServer {
  std::string executor;
  bool unreachable = false;  // that executor did not answer: each turn tries it again
  std::string error;         // the turn's error (mcp::required_unreachable_message)
};

// What the session runs with: its engine snapshot and what it sees of it, its executors, its MCP
// servers, its journal and the editor it reports to.
struct SessionServices {
  // The engine snapshot this session uses and what it sees of it (skills, AGENTS.md, agent).
  std::shared_ptr<const engine::Engine> engine;
  engine::SessionView view;
  // Every executor it may use.
  std::shared_ptr<executors::Registry> executors;
  // Its skills and AGENTS.md as read on its default executor when it is not local (null on local).
  std::shared_ptr<const engine::ExecutorSnapshot> executor_files;
  // Executors other than the default one its tools have used: their AGENTS.md joined then.
  std::set<std::string> executors_used;
  std::shared_ptr<mcp::McpManager> mcp;
  std::map<std::string, LeftOutServer> required_mcp_left_out;  // by server id
  // Everything that happens is appended here as it happens (null when the disk refused).
  std::shared_ptr<sessions::SessionWriter> journal;
  // The files' contents before the agent changed them (checkpointing.hpp); null without a journal.
  std::shared_ptr<sessions::CheckpointStore> checkpoints;
  // Why the last write to `journal` failed, until the end of the turn tells the editor.
  std::string journal_error;
  // Why there is no `journal` (it could not be created or opened): each turn's end tells the editor.
  std::string journal_unwritable;
  // Where its notices go (notify); null in tests that show none.
  EditorHost* editor = nullptr;
};

// A message steered into the running turn (steering.hpp), with the blocks the editor sent.
struct SteeredMessage {
  Message message;
  boost::json::array prompt;
};

// The prompt turn in flight, if any.
struct RunningTurn {
  support::CancelSourcePtr cancel;  // session/cancel fires it
  // Messages steered in that wait for its next model request (join_steered).
  std::vector<SteeredMessage> steered;
  // The journal's size when that turn began: what a fork copies while it runs.
  std::uint64_t journal_before = 0;
};

struct Session {
  // A sub-agent's conversation run inside a spawn_agent call of `parent` (same id until it gets a
  // session of its own): its roots, mode, default executor, executors, skills and AGENTS.md as
  // read there, and the answers remembered for the session; `agent` with `engine`, the parent's
  // turn's snapshot.
  static Session child_of(const Session& parent, std::shared_ptr<const engine::Engine> engine, const std::string& agent);

  // What its tools may know of it.
  ToolEnv tool_env() const { return ToolEnv{id, settings.cwd, settings.mode, settings.executor, {}}; }
  // What resolve_model is given: the picked model wins over the agent's.
  std::optional<std::string> model_override() const {
    return settings.model.empty() ? services.view.agent.model : std::optional<std::string>(settings.model);
  }

  std::string id;
  // A sub-agent's own session: the session that spawned it (hooks keep naming that one).
  std::string parent_id;
  SessionSettings settings;
  Conversation conversation;
  SessionServices services;
  RunningTurn turn;
  // allow_always / reject_always answers by approval key (approval::Memory), for the rest of the
  // session; journaled (remember_answer), so that session/load and session/resume keep them.
  std::map<std::string, bool> remembered_permissions;
  // Set once its SessionStart hooks have run. They run after the session/new|load answer (a slow
  // hook never delays the editor); the first turn waits for them. Null: nothing to wait for.
  std::shared_ptr<support::OneShotEvent> started;
  // Fired when the session closes or the server shuts down: ends what runs for the session outside
  // a turn (its SessionStart hooks), which would otherwise run on until their own timeout; no
  // notice is shown after it.
  support::CancelSourcePtr closing = std::make_shared<support::CancelSource>();
  // True once the session has an engine with its extensions (plugins, hooks, MCP servers) that
  // loaded, and its MCP manager: set up after the session/new|load answer (see
  // SessionManager::complete_set_up). Until then the editor's servers wait in editor_servers.
  bool set_up = false;
  std::vector<bridge::mcp::ServerSpec> editor_servers;
  // A sub-agent shown inside its parent's session (the editor does not show sub-agent sessions):
  // it has no journal; what it shows (its answers and tool calls) is journaled in the parent's, so
  // session/load replays it as it was shown.
  struct ShownIn {
    Session* parent = nullptr;
    std::string agent_id;  // the spawn_agent call that runs it
  };
  std::optional<ShownIn> shown_in;
};

// The executor `id` for this session's work, which marks it as used by the session (an
// image-mode container stays until no open session uses it); null when there is none.
std::shared_ptr<Executor> use_executor(const Session& session, const std::string& id);

// Shows a notice to the user only (never to the model). Before the editor has the session/new|load
// answer the editor's side holds it (SessionPresentation); after the session closed it is dropped.
void notify(const Session& session, Notice notice);

}  // namespace runtime
