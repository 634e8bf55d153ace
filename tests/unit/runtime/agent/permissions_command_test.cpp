// `/permissions` (issue 36): which prompts are the command, and how the list names each key.
#include <gtest/gtest.h>

#include "runtime/agent/permissions_command.hpp"

using runtime::describe_approval_key;
using runtime::permissions_command;

TEST(PermissionsCommand, OnlyTheCommandItselfIsTakenWithItsArgument) {
  runtime::Session session;
  EXPECT_EQ(permissions_command(session, "/permissions"), std::optional<std::string>(""));
  EXPECT_EQ(permissions_command(session, "  /permissions clear \n"), std::optional<std::string>("clear"));
  EXPECT_EQ(permissions_command(session, "/permissions\tclear"), std::optional<std::string>("clear"));
  EXPECT_FALSE(permissions_command(session, "/permissionsx")) << "another slash command is not this one";
  EXPECT_FALSE(permissions_command(session, "what are /permissions?")) << "text that mentions it is a prompt";
}

TEST(PermissionsCommand, EachKeyIsNamedAsTheUserKnowsIt) {
  EXPECT_EQ(describe_approval_key("bash:npm test"), "`npm test` (commands)");
  EXPECT_EQ(describe_approval_key("edit:/work/app"), "edits in /work/app");
  EXPECT_EQ(describe_approval_key("read:/etc/nginx"), "reads in /etc/nginx");
  EXPECT_EQ(describe_approval_key("mcp:github/create_issue"), "MCP tool `create_issue` of server `github`");
  EXPECT_EQ(describe_approval_key("odd"), "odd") << "a key of no known kind is shown as it is";
}
