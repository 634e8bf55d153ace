// config_option_update goes through the one encoder (session_updates.cpp), not built inline.
#include <gtest/gtest.h>

#include "runtime/server/session_updates.hpp"

namespace {

namespace json = boost::json;

TEST(ConfigOptionUpdate, CarriesTheOptionsAsSessionConfigOptions) {
  std::vector<acp::schema::SessionConfigOption> options{
      {"mode", "Mode", "What the agent may do", "mode", "ask", {{"ask", "Ask", std::nullopt}}}};
  EXPECT_EQ(json::value(runtime::server::config_option_update(options)), json::parse(R"({
    "sessionUpdate": "config_option_update",
    "configOptions": [{"id": "mode", "name": "Mode", "description": "What the agent may do", "type": "select",
                       "currentValue": "ask", "options": [{"value": "ask", "name": "Ask"}], "category": "mode"}]})"));
}

}  // namespace
