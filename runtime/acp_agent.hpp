#pragma once
// The protocol-facing agent: binds the ACP agent methods on a Connection and maps them onto
// sessions and the turn loop. Everything the editor can ask of the server starts here.
#include <boost/asio/thread_pool.hpp>
#include <map>
#include <memory>
#include <string>

#include "acp/client_api.hpp"
#include "acp/connection.hpp"
#include "runtime/agent/agent_loop.hpp"
#include "runtime/agent/session.hpp"
#include "runtime/config/main_config.hpp"

namespace runtime {

class AcpAgent {
 public:
  AcpAgent(acp::Connection& conn, boost::asio::thread_pool& pool);

  // Re-reads the configuration; the old one stays when the new one has errors.
  void reload_config();
  // The client is gone: cancel every turn.
  void shutdown();

 private:
  void bind();
  acp::awaitable<boost::json::value> initialize(boost::json::value params);
  acp::awaitable<boost::json::value> new_session(boost::json::value params);
  acp::awaitable<boost::json::value> prompt(boost::json::value params, acp::RequestContext ctx);
  acp::awaitable<boost::json::value> set_mode(boost::json::value params);
  void cancel(const boost::json::value& params);

  Session& session_for(const boost::json::value& params);
  std::string system_prompt(const Session& session) const;

  acp::Connection& conn_;
  acp::ClientApi client_;
  boost::asio::thread_pool& pool_;
  AgentLoop loop_;
  config::MainConfig config_;
  std::map<std::string, std::unique_ptr<Session>> sessions_;
};

}  // namespace runtime
