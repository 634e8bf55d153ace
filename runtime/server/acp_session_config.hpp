#pragma once
// A session's pickers over ACP: session/set_mode, session/set_config_option and the legacy
// session/set_model, and the config_option_update the editor gets when the options change on
// their own (a provider's model list arrived, the configuration was reloaded).
#include <boost/asio/any_io_executor.hpp>
#include <string>
#include <vector>

#include "acp/binder.hpp"
#include "acp/client_api.hpp"
#include "acp/schema/config.hpp"
#include "runtime/agent/session_manager.hpp"
#include "runtime/providers/model_catalog.hpp"
#include "runtime/server/editor_host_acp.hpp"

namespace runtime::server {

class AcpSessionConfig {
 public:
  AcpSessionConfig(SessionManager& sessions, AcpEditorHost& host, acp::ClientApi& client,
                   boost::asio::any_io_executor io);
  void bind(acp::Binder& binder);
  // The session's options, remembered as what the editor shows (session/new's answer).
  std::vector<acp::schema::SessionConfigOption> shown_config_options(Session& s);
  // The model lists `cfg`'s providers still lack, fetched in the background; the picker fills in
  // with a config_option_update when they arrive, nothing waits.
  void fetch_models(const config::MainConfig& cfg) { models_.fetch_missing(cfg); }
  void stop() { models_.stop(); }

 private:
  using Empty = acp::EmptyResponse;
  acp::awaitable<Empty> set_mode(acp::schema::SetSessionModeRequest req);
  acp::awaitable<acp::schema::SetSessionConfigOptionResponse> set_config_option(
      acp::schema::SetSessionConfigOptionRequest req);
  acp::awaitable<Empty> set_model(acp::schema::SetSessionModelRequest req);  // legacy alias of the model option
  acp::awaitable<void> apply(Session& session, const std::string& config_id, const std::string& value);
  // A config_option_update with the options (set_mode, set_model: answers without them).
  void send_config_options(Session& s);
  // A config_option_update to each open session whose options differ from what its editor shows.
  void send_changed_config_options();

  SessionManager& sessions_;
  AcpEditorHost& host_;
  acp::ClientApi& client_;
  providers::ModelCatalog models_;
};

}  // namespace runtime::server
