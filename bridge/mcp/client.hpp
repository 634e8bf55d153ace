#pragma once
// An MCP client session over one Transport: JSON-RPC ids and replies, the initialize
// handshake (version negotiation; server/discover on a stateless transport), tools/list with pagination, tools/call with a timeout and
// cancellation (notifications/cancelled), ping, and answers to the server's own requests
// (roots/list; elicitation/create through Options::elicit, declined at once without it;
// sampling is refused properly; anything else is -32601).
//
//   auto client = std::make_shared<Client>(ex, make_transport(ex, spec, deps), options);
//   co_await client->connect(spec.startup_timeout);
//   auto tools = co_await client->list_tools(spec.startup_timeout);
//   auto result = co_await client->call_tool("echo", args, spec.tool_timeout, &cancel);
//   co_await client->close();
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/cancellation.hpp"
#include "support/pending_calls.hpp"
#include "bridge/mcp/errors.hpp"
#include "bridge/mcp/transport.hpp"

namespace bridge::mcp {

// The revision we offer, and the ones we accept back.
inline constexpr const char* kOfferedProtocolVersion = "2025-06-18";
inline constexpr const char* kStatelessProtocolVersion = "2026-07-28";
bool is_supported_protocol_version(std::string_view v);

struct ToolInfo {
  std::string name;
  std::string title;
  std::string description;
  boost::json::object input_schema;
  boost::json::value output_schema = nullptr;
  boost::json::value annotations = nullptr;
};

struct Root {
  std::string uri;  // file://...
  std::string name;
};

// file:// URI of an absolute path, percent-encoded.
std::string file_uri(const std::string& absolute_path);

class Client : public std::enable_shared_from_this<Client> {
 public:
  struct Options {
    std::string client_name = "openvaala";
    std::string client_version = "0.0.0";
    std::string log_id;  // server id in log lines
    // The session's folders, for roots/list (asked each time).
    std::function<std::vector<Root>()> roots;
    // notifications/tools/list_changed arrived (list_tools() again before the next use).
    std::function<void()> on_tools_changed;
    // notifications/prompts/list_changed and notifications/resources/list_changed.
    std::function<void()> on_prompts_changed;
    std::function<void()> on_resources_changed;
    // The `elicitation` capability offered in initialize ({form: {}} and/or {url: {}}); none
    // when unset. Offer it only when `elicit` can put the question to someone.
    std::optional<boost::json::object> elicitation_capability;
    // Answers the server's elicitation/create (its params as sent); the result goes back
    // unchanged ({action, content?}). Unset: declined at once.
    std::function<boost::asio::awaitable<boost::json::object>(boost::json::object params)> elicit;
    // notifications/elicitation/complete: the URL question `elicitation_id` was completed.
    std::function<void(const std::string& elicitation_id)> on_elicitation_complete;
    // The connection is gone (crash, stream ended); not called after close().
    std::function<void(const std::string& reason)> on_closed;
  };
  using ProgressFn = std::function<void(const boost::json::object& params)>;

  Client(boost::asio::any_io_executor ex, std::shared_ptr<Transport> transport, Options options);
  ~Client();

  // Starts the transport and runs the handshake, all within `timeout`. Throws McpError.
  boost::asio::awaitable<void> connect(std::chrono::milliseconds timeout);
  // Every page of tools/list.
  boost::asio::awaitable<std::vector<ToolInfo>> list_tools(std::chrono::milliseconds timeout,
                                                           support::CancelSource* cancel = nullptr);
  // The tools/call result object (content, structuredContent, isError). A JSON-RPC error from
  // the server, a timeout or a cancel throws McpError.
  boost::asio::awaitable<boost::json::object> call_tool(const std::string& name, boost::json::object arguments,
                                                        std::chrono::milliseconds timeout,
                                                        support::CancelSource* cancel = nullptr,
                                                        ProgressFn on_progress = nullptr);
  boost::asio::awaitable<void> ping(std::chrono::milliseconds timeout);
  // Every page of a paginated list request (tools/list, prompts/list, resources/list, ...):
  // the items of `key` from all pages.
  boost::asio::awaitable<boost::json::array> list_all(std::string method, std::string key,
                                                      std::chrono::milliseconds timeout,
                                                      support::CancelSource* cancel = nullptr);
  // Any request; the raw result.
  boost::asio::awaitable<boost::json::value> request(std::string method, boost::json::object params,
                                                     std::chrono::milliseconds timeout,
                                                     support::CancelSource* cancel = nullptr,
                                                     ProgressFn on_progress = nullptr);
  void notify(std::string method, boost::json::object params);

  boost::asio::awaitable<void> close();
  void kill_now();

  bool connected() const { return state_ == State::Ready; }
  bool tools_stale() const { return tools_stale_; }
  void mark_tools_fresh() { tools_stale_ = false; }
  const std::string& protocol_version() const { return protocol_version_; }
  const boost::json::object& server_info() const { return server_info_; }
  const boost::json::object& server_capabilities() const { return server_capabilities_; }
  const std::string& instructions() const { return instructions_; }
  const std::string& closed_reason() const { return closed_reason_; }
  std::string describe() const { return transport_->describe(); }

 private:
  enum class State { New, Connecting, Ready, Closed };
  // serverInfo, capabilities and instructions from initialize or server/discover.
  void keep_server_description(const boost::json::object& result);
  boost::asio::awaitable<void> discover(std::chrono::steady_clock::time_point deadline);
  boost::asio::awaitable<void> initialize(std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout);
  void on_message(boost::json::object msg);
  void on_transport_closed(std::string reason);
  void handle_server_request(const std::string& method, const boost::json::value& id, const boost::json::object& params);
  void handle_notification(const std::string& method, const boost::json::object& params);
  void handle_response(const boost::json::object& msg);
  void answer_elicitation(boost::json::value id, boost::json::object params);
  void fail_all(McpError::Kind kind, const std::string& why);

  boost::asio::any_io_executor ex_;
  std::shared_ptr<Transport> transport_;
  Options options_;
  State state_ = State::New;
  // Our requests to the server, by id, each with its deadline (one timer for all).
  support::PendingCalls<boost::json::value, McpError> pending_;
  std::map<std::string, ProgressFn> progress_;  // by serialized progressToken
  bool tools_stale_ = false;
  std::string protocol_version_;
  boost::json::object server_info_;
  boost::json::object server_capabilities_;
  std::string instructions_;
  std::string closed_reason_;
};

}  // namespace bridge::mcp
