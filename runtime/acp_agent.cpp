#include "runtime/acp_agent.hpp"

#include <spdlog/spdlog.h>

#include <random>

#include "acp/methods.hpp"
#include "acp/params.hpp"
#include "runtime/config/paths.hpp"

namespace runtime {

namespace json = boost::json;
using acp::Params;

namespace {

constexpr int kProtocolVersion = 1;

std::string new_session_id() {
  static std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string id = "ses_";
  for (int i = 0; i < 24; ++i) id.push_back(hex[rng() & 15]);
  return id;
}

std::vector<std::unique_ptr<tools::Tool>> builtin_tools() {
  std::vector<std::unique_ptr<tools::Tool>> t;
  t.push_back(tools::make_read_file_tool());
  t.push_back(tools::make_apply_patch_tool());
  t.push_back(tools::make_bash_tool());
  return t;
}

json::object modes_state(const Session& s) {
  json::array modes;
  for (const auto& m : all_modes())
    modes.push_back(json::object{{"id", m.id}, {"name", m.name}, {"description", m.description}});
  return json::object{{"currentModeId", mode_id(s.mode)}, {"availableModes", std::move(modes)}};
}

// The prompt's content blocks as one user message.
Message user_message_from(const json::array& prompt) {
  Message m;
  m.role = Message::Role::User;
  auto append = [&](std::string_view text) {
    if (!m.text.empty()) m.text += "\n";
    m.text.append(text);
  };
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    if (!prompt[i].is_object()) throw acp::invalid_params("prompt[" + std::to_string(i) + "] must be an object");
    const auto& block = prompt[i].as_object();
    auto type = acp::str_at(block, "type");
    if (type == "text") {
      append(acp::str_at(block, "text"));
    } else if (type == "image") {
      m.images.push_back({std::string(acp::str_at(block, "mimeType")), std::string(acp::str_at(block, "data"))});
    } else if (type == "resource_link") {
      append("[@" + std::string(acp::str_at(block, "name")) + "](" + std::string(acp::str_at(block, "uri")) + ")");
    } else if (type == "resource") {
      if (auto* res = acp::obj_at(block, "resource")) {
        auto uri = acp::str_at(*res, "uri");
        if (res->contains("text"))
          append("<context ref=\"" + std::string(uri) + "\">\n" + std::string(acp::str_at(*res, "text")) + "\n</context>");
        else
          append("[@" + std::string(uri) + "](" + std::string(uri) + ") (binary content not shown)");
      }
    } else if (type == "audio") {
      append("(an audio clip was attached; this agent cannot hear audio)");
    } else {
      throw acp::invalid_params("prompt[" + std::to_string(i) + "].type '" + std::string(type) + "' is not supported");
    }
  }
  return m;
}

}  // namespace

AcpAgent::AcpAgent(acp::Connection& conn, boost::asio::thread_pool& pool)
    : conn_(conn), client_(conn), pool_(pool), loop_(client_, pool, builtin_tools()) {
  reload_config();
  bind();
}

void AcpAgent::reload_config() {
  config::Diagnostics diags;
  auto cfg = config::load_main_config(config::config_root(), diags);
  for (const auto& d : diags) spdlog::warn("config: {}", d.to_string());
  if (config::has_errors(diags) && !config_.file.empty()) {
    spdlog::warn("config has errors; keeping the previous configuration");
    return;
  }
  config_ = std::move(cfg);
}

void AcpAgent::shutdown() {
  for (auto& [_, s] : sessions_)
    if (s->turn_cancel) s->turn_cancel->cancel();
}

void AcpAgent::bind() {
  using namespace acp::methods;
  conn_.on_request(kInitialize, [this](json::value p, acp::RequestContext) { return initialize(std::move(p)); });
  conn_.on_request(kAuthenticate, [](json::value p, acp::RequestContext) -> acp::awaitable<json::value> {
    Params(p).required_string("methodId");
    co_return json::object{};
  });
  conn_.on_request(kSessionNew, [this](json::value p, acp::RequestContext) { return new_session(std::move(p)); });
  conn_.on_request(kSessionPrompt, [this](json::value p, acp::RequestContext ctx) { return prompt(std::move(p), std::move(ctx)); });
  conn_.on_request(kSessionSetMode, [this](json::value p, acp::RequestContext) { return set_mode(std::move(p)); });
  conn_.on_notification(kSessionCancel, [this](json::value p) { cancel(p); });
}

acp::awaitable<json::value> AcpAgent::initialize(json::value params) {
  Params p(params);
  // We speak version 1 and answer 1 to any request: the client decides whether it can continue.
  if (!p.optional_int("protocolVersion")) throw acp::invalid_params("missing required field 'protocolVersion'");
  if (auto* caps = p.optional_object("clientCapabilities")) client_.set_capabilities(acp::ClientCapabilities::from_json(*caps));
  json::object agent_caps{
      {"loadSession", false},
      {"promptCapabilities", json::object{{"image", true}, {"audio", false}, {"embeddedContext", true}}},
      {"mcpCapabilities", json::object{{"http", false}, {"sse", false}}},
      {"sessionCapabilities", json::object{}},
  };
  co_return json::object{{"protocolVersion", kProtocolVersion},
                         {"agentCapabilities", std::move(agent_caps)},
                         {"authMethods", json::array{}},
                         {"agentInfo", json::object{{"name", "openvaala"}, {"title", "OpenVaala"}, {"version", OPENVAALA_VERSION}}}};
}

acp::awaitable<json::value> AcpAgent::new_session(json::value params) {
  Params p(params);
  std::string cwd = p.required_string("cwd");
  if (!std::filesystem::path(cwd).is_absolute()) throw acp::invalid_params("'cwd' must be an absolute path, got '" + cwd + "'");
  std::error_code ec;
  if (!std::filesystem::is_directory(cwd, ec)) throw acp::invalid_params("'cwd' is not a directory: " + cwd);
  p.optional_array("mcpServers");
  auto session = std::make_unique<Session>();
  session->id = new_session_id();
  session->cwd = std::filesystem::path(cwd).lexically_normal();
  json::object reply{{"sessionId", session->id}, {"modes", modes_state(*session)}};
  spdlog::info("session {} in {}", session->id, cwd);
  sessions_.emplace(session->id, std::move(session));
  co_return reply;
}

Session& AcpAgent::session_for(const json::value& params) {
  auto id = Params(params).required_string("sessionId");
  auto it = sessions_.find(id);
  if (it == sessions_.end()) throw acp::RpcError(acp::error_code::kResourceNotFound, "Unknown session: " + id);
  return *it->second;
}

std::string AcpAgent::system_prompt(const Session& session) const {
  std::string s =
      "You are OpenVaala, a coding agent working inside the user's editor. You help with software engineering "
      "tasks in the user's project: read files with read_file, change them with apply_patch, and run commands with "
      "bash. Prefer small, verifiable steps; read before you edit; after changing code, run the relevant checks. "
      "Keep answers short and concrete.\n\n"
      "Environment:\n- Working directory: " +
      session.cwd.string() + "\n- Platform: linux\n";
  return s;
}

acp::awaitable<json::value> AcpAgent::prompt(json::value params, acp::RequestContext ctx) {
  Session& session = session_for(params);
  Params p(params);
  Message message = user_message_from(p.required_array("prompt"));
  if (session.turn_cancel) throw acp::RpcError(acp::error_code::kInvalidRequest, "A prompt is already running in this session");

  std::optional<providers::ModelClient> model;
  try {
    model.emplace(providers::resolve_model(config_));
  } catch (const providers::ModelError& e) {
    throw acp::RpcError(e.kind() == providers::ModelError::Kind::Auth ? acp::error_code::kAuthRequired
                                                                      : acp::error_code::kInternalError,
                        e.what());
  }
  auto cancel = std::make_shared<acp::CancelSource>();
  session.turn_cancel = cancel;
  auto link = ctx.cancel->on_cancel([cancel] { cancel->cancel(); });
  TurnSettings settings{config_.max_turn_requests, system_prompt(session)};
  std::string stop_reason;
  try {
    stop_reason = co_await loop_.run_turn(session, std::move(message), *model, settings, *cancel);
  } catch (...) {
    session.turn_cancel.reset();
    throw;
  }
  session.turn_cancel.reset();
  co_return json::object{{"stopReason", stop_reason}};
}

acp::awaitable<json::value> AcpAgent::set_mode(json::value params) {
  Session& session = session_for(params);
  auto mode_id_str = Params(params).required_string("modeId");
  auto mode = mode_from_id(mode_id_str);
  if (!mode) throw acp::invalid_params("unknown modeId '" + mode_id_str + "' (available: default, accept_edits, read_only, full_auto)");
  session.mode = *mode;
  client_.session_update(session.id, json::object{{"sessionUpdate", "current_mode_update"}, {"currentModeId", mode_id_str}});
  co_return json::object{};
}

void AcpAgent::cancel(const json::value& params) {
  auto* id = params.is_object() ? params.as_object().if_contains("sessionId") : nullptr;
  if (!id || !id->is_string()) return;
  auto it = sessions_.find(std::string(id->as_string()));
  if (it != sessions_.end() && it->second->turn_cancel) it->second->turn_cancel->cancel();
}

}  // namespace runtime
