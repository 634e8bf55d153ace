#pragma once
// What the editor's pickers show and set: session modes (SessionModeState, session/set_mode) and
// config options (SessionConfigOption, session/set_config_option; session/set_model, the model
// option under its pre-2.4.0 name).
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "acp/schema/reader.hpp"

namespace acp::schema {

struct SessionMode {
  std::string id;
  std::string name;
  std::optional<std::string> description;
};

struct SessionModeState {
  std::string currentModeId;
  std::vector<SessionMode> availableModes;
};

struct SessionConfigSelectOption {
  std::string value;
  std::string name;
  std::optional<std::string> description;
};

// A `select` option (the only kind this agent offers).
struct SessionConfigOption {
  std::string id;
  std::string name;
  std::optional<std::string> description;
  std::optional<std::string> category;  // "mode", "model", "thought_level" (UX only)
  std::string currentValue;
  std::vector<SessionConfigSelectOption> options;
};

struct SetSessionModeRequest {
  std::string sessionId;
  std::string modeId;
};

struct SetSessionConfigOptionRequest {
  std::string sessionId;
  std::string configId;
  std::string value;  // select options only
};

struct SetSessionConfigOptionResponse {
  std::vector<SessionConfigOption> configOptions;
};

struct SetSessionModelRequest {  // legacy
  std::string sessionId;
  std::string modelId;
};

void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const SessionMode& m);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const SessionModeState& s);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const SessionConfigSelectOption& o);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const SessionConfigOption& o);
void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const SetSessionConfigOptionResponse& r);
void read(const Reader& r, SessionMode& out);
void read(const Reader& r, SessionModeState& out);
void read(const Reader& r, SessionConfigSelectOption& out);
void read(const Reader& r, SessionConfigOption& out);
void read(const Reader& r, SetSessionModeRequest& out);
void read(const Reader& r, SetSessionConfigOptionRequest& out);
void read(const Reader& r, SetSessionModelRequest& out);

}  // namespace acp::schema
