#pragma once
// The MCP servers of one session: starts them (all in the background once the session is
// open; the ones still missing before a turn), exposes their tools as runtime::tools::Tool named
// mcp__<id>__<tool>, restarts a server that crashed on its next use, and stops everything on
// close. Configured stdio servers come from the connection's McpServerPool, shared with the
// other sessions that would start them identically; the last session to close stops them.
//
// Wiring (per session; the session manager does this):
//   auto mcp = std::make_shared<McpManager>(deps, configured, from_editor);
//   mcp->start_all();                                   // after the session/new reply
//   auto extra = co_await mcp->tools_for_turn(&cancel); // each turn
//   co_await mcp->close();                              // session closed
//   mcp->kill_now();                                    // shutdown (never blocks)
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/cancellation.hpp"
#include "bridge/mcp/client.hpp"
#include "bridge/mcp/server_spec.hpp"
#include "runtime/config/main_config.hpp"
#include "runtime/tools/tool.hpp"

#include "bridge/mcp/transport.hpp"
#include "runtime/mcp/mcp_server.hpp"

namespace runtime::mcp {

struct RequiredServerUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The turn's error for a `required` server that cannot be used:
// "The required MCP server 'x' (<origin>) could not be reached: <why>".
std::string required_unreachable_message(const bridge::mcp::ServerSpec& spec, const std::string& why);

struct ServerStatus {
  std::string id;
  std::string transport;  // stdio | http | sse | acp
  ServerState state = ServerState::NotStarted;
  std::string error;      // why it failed or crashed
  std::size_t tool_count = 0;
  bool required = false;
};

class McpManager {
 public:
  struct Deps {
    boost::asio::any_io_executor executor;
    bridge::mcp::TransportDeps tunnel;               // for servers the editor runs (MCP over its connection)
    std::vector<std::filesystem::path> roots;        // the session's folders (roots/list)
    McpServer::EventFn on_server_event;  // see McpServer::EventFn
    // The connection's shared servers; null: nothing is shared.
    std::shared_ptr<McpServerPool> pool = nullptr;
    // What the editor can ask the user: servers are offered MCP elicitation only then.
    bool elicit_form = false;
    bool elicit_url = false;
    // A server finished a URL question (notifications/elicitation/complete).
    std::function<void(const std::string& elicitation_id)> on_elicitation_complete = nullptr;
    // A server's prompt list became known or changed (the slash commands follow it).
    std::function<void()> on_prompts_changed = nullptr;
  };

  // An MCP prompt as a slash command: /mcp__<id>__<prompt> with its arguments as the hint.
  struct PromptCommand {
    std::string name;  // without the slash
    std::string description;
    std::string input_hint;  // "<city> [state]"; empty without arguments
  };
  // What a typed /mcp__<id>__<prompt> became: the prompt's messages as the user's turn, or why not.
  struct PromptExpansion {
    bool ok = false;
    std::string text;   // ok: the messages; else the error for the user
    std::vector<std::pair<std::string, std::string>> images;  // (mimeType, base64 data)
  };

  // `servers` (configured) are shared through deps.pool when they are stdio; `private_servers`
  // (what the editor gave this session) never are.
  McpManager(Deps deps, std::vector<bridge::mcp::ServerSpec> servers,
             std::vector<bridge::mcp::ServerSpec> private_servers = {});
  ~McpManager();  // kill_now()
  McpManager(const McpManager&) = delete;
  McpManager& operator=(const McpManager&) = delete;

  // What a turn was offered, for the servers that join it later (tools_for_turn's optional_wait).
  struct TurnOffer {
    std::set<std::string> names;    // the tool names offered so far
    std::vector<std::string> late;  // optional servers still starting when the wait ran out
    config::McpLimits limits;       // what each server may offer, for the late ones too
  };
  // The servers of TurnOffer::late that came up, and their tools.
  struct Joined {
    std::vector<std::string> servers;
    std::vector<std::unique_ptr<tools::Tool>> tools;
  };

  // Starts every server in the background. Never throws; failures show in status().
  void start_all();
  // Waits for servers still starting, starts the ones not running (again, after a crash),
  // refreshes tool lists that changed, and returns one Tool per offered MCP tool. Throws
  // RequiredServerUnavailable naming the server when a `required` server cannot be reached.
  // A server that needs OAuth sign-in is signed in through `sign_in` (the turn waits for the
  // redirect); without one, or when the sign-in fails, it is left out (a required one fails
  // the turn, saying it needs sign-in). An optional server whose sign-in failed is not asked
  // again in this session.
  // With `optional_wait`, optional servers still starting are waited for at most that long (all
  // together, started in the background first): the ones not up by then are left out and named
  // in `offer->late`, for join_late. Required servers are always waited for. `limits`: each
  // server offers at most limits.tools_per_server tools (the rest are left out, with a warning in
  // take_warnings()), and each result reaches the model within limits.output_bytes.
  boost::asio::awaitable<std::vector<std::unique_ptr<tools::Tool>>> tools_for_turn(
      support::CancelSource* cancel, bridge::mcp::oauth::SignInPresenter* sign_in = nullptr,
      config::McpLimits limits = {}, std::optional<std::chrono::milliseconds> optional_wait = std::nullopt,
      TurnOffer* offer = nullptr);
  // The late servers of a turn that are up now, with the tools they add to `offer` (names taken
  // are skipped; the resource tools come with the first server that has resources). A late server
  // that failed meanwhile leaves `offer.late` without joining.
  Joined join_late(TurnOffer& offer);
  // What the user should be told about the servers since the last call (a server's tools left
  // out), each once per session.
  std::vector<std::string> take_warnings();
  std::vector<ServerStatus> status() const;

  // The ready servers' prompts, in server order.
  std::vector<PromptCommand> prompt_commands() const;
  // `text` when it starts with one of prompt_commands(): prompts/get with the words after it as
  // the arguments in order (the last takes the rest of the line); nullopt for any other text.
  boost::asio::awaitable<std::optional<PromptExpansion>> expand_prompt_command(std::string text,
                                                                               support::CancelSource* cancel);
  // The contents of `uri` when one of the servers lists it (resources/read), as context for the
  // model; nullopt when no server has it. Throws McpError when the read fails.
  boost::asio::awaitable<std::optional<std::string>> read_listed_resource(std::string uri,
                                                                        support::CancelSource* cancel);
  const std::vector<bridge::mcp::ServerSpec>& specs() const;
  // The servers given as private_servers (the editor's own), as given.
  const std::vector<bridge::mcp::ServerSpec>& editor_specs() const;
  // Stops every server no other session uses, all at once (stdio: close stdin, 500 ms,
  // SIGTERM, 400 ms, SIGKILL; http: DELETE).
  boost::asio::awaitable<void> close();
  // Teardown for the shutdown path: signals them and returns at once.
  void kill_now();

  class Impl;  // mcp_manager_impl.hpp, for the manager's own files

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace runtime::mcp
