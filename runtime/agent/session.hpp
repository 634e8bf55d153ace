#pragma once
// One conversation with the editor: its folder, mode, agent, history and the turn in flight.
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

namespace mcp {
class McpManager;
}
namespace sessions {
class SessionWriter;
}

struct ClientInstructions {
  std::string text;       // empty: none
  bool replace = false;   // ACP mode "override" (else "append")
};

struct Session {
  // What its tools may know of it.
  ToolEnv tool_env() const { return ToolEnv{id, cwd, mode, executor, {}}; }

  std::string id;
  // A sub-agent's own session: the session that spawned it (hooks keep naming that one).
  std::string parent_id;
  std::filesystem::path cwd;
  // More folders the editor made part of the session (ACP additionalDirectories): roots like the
  // cwd for what may be touched without asking, and MCP roots. Not saved: load and resume set them anew.
  std::vector<std::filesystem::path> additional_roots;
  // The editor's own instructions (ACP systemPrompt): added after ours, or replacing our default
  // instructions (the environment stays). Not saved, like additional_roots.
  ClientInstructions client_instructions;
  Mode mode = Mode::Default;
  std::vector<Message> history;
  // allow_always / reject_always answers, by tool name, for the rest of the session.
  std::map<std::string, bool> remembered_permissions;
  // The prompt turn in flight, if any; session/cancel fires it.
  support::CancelSourcePtr turn_cancel;
  // The journal's size when that turn began: what a fork copies while it runs.
  std::uint64_t journal_before_turn = 0;
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

  // The engine snapshot this session uses and what it sees of it (skills, AGENTS.md, agent).
  std::shared_ptr<const engine::Engine> engine;
  engine::SessionView view;
  std::string agent_name;
  // The model picked in the editor ("<provider>/<model>"); empty: the agent's, else the configured one.
  std::string model;
  // What resolve_model is given: the picked model wins over the agent's.
  std::optional<std::string> model_override() const {
    return model.empty() ? view.agent.model : std::optional<std::string>(model);
  }
  // The default executor of its tools (DESIGN §10): session/new's _meta, the agent's, config.yaml's
  // default_executor, else local; switched in the editor. And every executor it may use.
  std::string executor = "local";
  std::shared_ptr<executors::Registry> executors;
  // Its skills and AGENTS.md as read on that executor when it is not local (null on local).
  std::shared_ptr<const engine::ExecutorSnapshot> executor_files;
  // Executors other than the default one its tools have used: their AGENTS.md joined then.
  std::set<std::string> executors_used;
  // The thought level picked in the editor (OpenAI reasoning_effort); empty: the model's default.
  std::string reasoning_effort;
  std::string commands_sent;  // the slash commands last shown (names), to send only changes
  // AGENTS.md files already given to the model (each enters the context once).
  std::set<std::filesystem::path> agents_md_included;
  // Context from hooks (SessionStart) waiting for the next user message.
  std::vector<std::string> pending_context;
  // Set once its SessionStart hooks have run. They run after the session/new|load answer (a slow
  // hook never delays the editor); the first turn waits for them. Null: nothing to wait for.
  std::shared_ptr<support::OneShotEvent> started;
  // Fired when the session closes or the server shuts down: ends what runs for the session outside
  // a turn (its SessionStart hooks), which would otherwise run on until their own timeout.
  support::CancelSourcePtr closing = std::make_shared<support::CancelSource>();
  std::shared_ptr<mcp::McpManager> mcp;
  // Required configured MCP servers that could not be placed on their executor (make_mcp): each
  // fails every turn until it can (SessionManager::place_required_mcp_servers).
  struct LeftOutServer {
    std::string executor;
    bool unreachable = false;  // that executor did not answer: each turn tries it again
    std::string error;         // the turn's error (mcp::required_unreachable_message)
  };
  std::map<std::string, LeftOutServer> required_mcp_left_out;  // by server id
  // True once the session has an engine with its extensions (plugins, hooks, MCP servers) that
  // loaded, and its MCP manager: set up after the session/new|load answer (see
  // SessionManager::complete_set_up). Until then the editor's servers wait in editor_servers.
  bool set_up = false;
  std::vector<bridge::mcp::ServerSpec> editor_servers;
  // False until the editor has the answer to session/new|load|resume: notices wait in held_notices.
  bool announced = false;
  std::vector<Notice> held_notices;
  // Everything that happens is appended here as it happens (null when the disk refused).
  std::shared_ptr<sessions::SessionWriter> log;
  // A sub-agent shown inside its parent's session (the editor does not show sub-agent sessions):
  // it has no log; what it shows (its answers and tool calls) is journaled in the parent's, so
  // session/load replays it as it was shown.
  struct ShownIn {
    Session* parent = nullptr;
    std::string agent_id;  // the spawn_agent call that runs it
  };
  std::optional<ShownIn> shown_in;
  // Why the last write to `log` failed, until the end of the turn tells the editor.
  std::string log_error;
  // Why there is no `log` (it could not be created or opened): each turn's end tells the editor.
  std::string log_unwritable;
  std::string title_sent;
  std::string config_options_sent;  // the config options last shown (JSON), to send only changes
};

}  // namespace runtime
