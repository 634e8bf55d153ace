#pragma once
// McpManager's insides, shared by its files (mcp_manager.cpp: servers and tools;
// mcp_features.cpp: prompts as slash commands and resources).
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/mcp/mcp_manager.hpp"

namespace runtime::mcp {

// One of the session's servers: its own view (id, tools filter, required) and the connection.
struct SessionServer {
  bridge::mcp::ServerSpec spec;
  std::shared_ptr<McpServer> server;
  bool shared = false;
  int subscription = 0;
  int prompt_watch = 0;
};

class McpManager::Impl : public std::enable_shared_from_this<McpManager::Impl> {
 public:
  Impl(Deps deps, std::vector<bridge::mcp::ServerSpec> servers, std::vector<bridge::mcp::ServerSpec> private_servers) : deps_(std::move(deps)) {
    McpServer::Env env{deps_.executor, deps_.tunnel, deps_.roots, deps_.elicit_form, deps_.elicit_url,
                       deps_.on_elicitation_complete};
    auto add = [&](bridge::mcp::ServerSpec spec, bool may_share) {
      SessionServer e;
      e.shared = may_share && deps_.pool && McpServerPool::shareable(spec);
      e.server = e.shared ? deps_.pool->acquire(spec, env) : std::make_shared<McpServer>(env, spec);
      if (deps_.on_server_event) e.subscription = e.server->subscribe(deps_.on_server_event);
      if (deps_.on_prompts_changed) e.prompt_watch = e.server->watch_prompts(deps_.on_prompts_changed);
      specs_.push_back(spec);
      e.spec = std::move(spec);
      entries_.push_back(std::move(e));
    };
    for (auto& s : servers) add(std::move(s), true);
    editor_specs_ = private_servers;
    for (auto& s : private_servers) add(std::move(s), false);
  }

  // Leaves every server; returns the ones this session was the last to use.
  std::vector<std::shared_ptr<McpServer>> leave() {
    std::vector<std::shared_ptr<McpServer>> out;
    for (auto& e : std::exchange(entries_, {})) {
      if (e.subscription) e.server->unsubscribe(e.subscription);
      if (e.prompt_watch) e.server->unwatch_prompts(e.prompt_watch);
      if (!e.shared || deps_.pool->release(e.server)) out.push_back(std::move(e.server));
    }
    return out;
  }

  Deps deps_;
  std::vector<bridge::mcp::ServerSpec> specs_;
  std::vector<bridge::mcp::ServerSpec> editor_specs_;  // the session's own (private_servers)
  std::vector<SessionServer> entries_;
  std::set<std::string> declined_;  // optional servers whose sign-in failed: not asked again
  std::vector<std::string> warnings_;      // for McpManager::take_warnings
  std::set<std::string> capped_warned_;    // servers whose tools were left out, told once

  // The server's tools the model is offered: those its `tools:` names (all without one), at most
  // `limit`; a warning names the server and how many were left out.
  std::vector<const bridge::mcp::ToolInfo*> tools_to_offer(const bridge::mcp::ServerSpec& spec,
                                                           const std::vector<bridge::mcp::ToolInfo>& tools,
                                                           std::size_t limit);
  bool closed_ = false;
};

// list_mcp_resources and read_mcp_resource over the session's servers (mcp_features.cpp).
std::vector<std::unique_ptr<tools::Tool>> resource_tools(const std::shared_ptr<McpManager::Impl>& impl);

}  // namespace runtime::mcp
