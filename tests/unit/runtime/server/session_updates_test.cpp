// The one session/update encoder: each engine event as the ACP schema has it, and a replayed
// tool call encoded like the live one.
#include <gtest/gtest.h>

#include "runtime/server/session_updates.hpp"

using namespace runtime;
using runtime::server::encode_update;
namespace json = boost::json;

TEST(SessionUpdates, TextThoughtAndNoticesAreChunks) {
  auto t = encode_update(TextDelta{"hi"});
  EXPECT_EQ(t.at("sessionUpdate"), "agent_message_chunk");
  EXPECT_EQ(t.at("content"), (json::object{{"type", "text"}, {"text", "hi"}}));
  EXPECT_EQ(encode_update(ThoughtDelta{"hmm"}).at("sessionUpdate"), "agent_thought_chunk");
  auto n = encode_update(Notice{"MCP server `x` failed"});
  EXPECT_EQ(n.at("sessionUpdate"), "agent_message_chunk");
  EXPECT_NE(std::string(n.at("content").at("text").as_string()).find("MCP server `x` failed"), std::string::npos);
  auto u = encode_update(UserContent{json::object{{"type", "text"}, {"text", "q"}}});
  EXPECT_EQ(u.at("sessionUpdate"), "user_message_chunk");
}

TEST(SessionUpdates, ToolCallsCarryEveryFieldInTheSchemaShape) {
  ToolCallFields f;
  f.title = "Edit a.txt";
  f.kind = ToolKind::Edit;
  f.status = ToolStatus::Pending;
  f.locations = std::vector<ToolLocation>{{"/p/a.txt", 3}};
  f.raw_input = json::object{{"patch", "..."}};
  f.content = std::vector<ToolContent>{DiffContent{"/p/a.txt", std::nullopt, "new"}, TextContent{"note"},
                                       TerminalContent{"t1"},
                                       BlockContent{json::object{{"type", "image"}, {"data", "AA"}, {"mimeType", "image/png"}}}};
  auto o = encode_update(ToolCallBegin{"c1", f});
  EXPECT_EQ(o.at("sessionUpdate"), "tool_call");
  EXPECT_EQ(o.at("toolCallId"), "c1");
  EXPECT_EQ(o.at("kind"), "edit");
  EXPECT_EQ(o.at("status"), "pending");
  EXPECT_EQ(o.at("locations"), (json::array{json::object{{"path", "/p/a.txt"}, {"line", 3}}}));
  const auto& content = o.at("content").as_array();
  ASSERT_EQ(content.size(), 4u);
  EXPECT_EQ(content[0], (json::object{{"type", "diff"}, {"path", "/p/a.txt"}, {"oldText", nullptr}, {"newText", "new"}}))
      << "a new file's diff has oldText null";
  EXPECT_EQ(content[1], (json::object{{"type", "content"}, {"content", json::object{{"type", "text"}, {"text", "note"}}}}));
  EXPECT_EQ(content[2], (json::object{{"type", "terminal"}, {"terminalId", "t1"}}));
  EXPECT_EQ(content[3].at("content").at("type"), "image");

  ToolCallFields done;
  done.status = ToolStatus::Failed;
  auto up = encode_update(ToolCallUpdate{"c1", done});
  EXPECT_EQ(up.at("sessionUpdate"), "tool_call_update");
  EXPECT_EQ(up.at("status"), "failed");
  EXPECT_FALSE(up.contains("title")) << "an update sends only what changed";
  EXPECT_EQ(encode_update(ToolCallBegin{"c2", {}}).at("title"), "") << "a new tool call always has a title";
}

TEST(SessionUpdates, SessionLevelUpdates) {
  auto plan = encode_update(PlanShown{{{"Read", "completed"}, {"Write", "in_progress"}}});
  EXPECT_EQ(plan.at("sessionUpdate"), "plan");
  EXPECT_EQ(plan.at("entries").as_array()[1],
            (json::object{{"content", "Write"}, {"priority", "medium"}, {"status", "in_progress"}}));
  auto usage = encode_update(ContextUsage{10, 100});
  EXPECT_EQ(usage, (json::object{{"sessionUpdate", "usage_update"}, {"used", 10}, {"size", 100}}));
  EXPECT_EQ(encode_update(ModeChanged{"read_only"}).at("currentModeId"), "read_only");
  auto cmds = encode_update(CommandsChanged{{{"review", "Reviews", "what to review"}, {"compact", "Compacts", ""}}});
  EXPECT_EQ(cmds.at("sessionUpdate"), "available_commands_update");
  const auto& list = cmds.at("availableCommands").as_array();
  EXPECT_EQ(list[0].at("input"), (json::object{{"hint", "what to review"}}));
  EXPECT_FALSE(list[1].as_object().contains("input")) << "a command without input has no input hint";
  auto title = encode_update(TitleChanged{"Fix it", ""});
  EXPECT_EQ(title.at("sessionUpdate"), "session_info_update");
  EXPECT_FALSE(title.contains("updatedAt"));
}

TEST(SessionUpdates, ASubAgentSessionIsAnnouncedAndEndedAsTheUnstableSchemaSays) {
  const SubagentChanged hello{.session_id = "ses_child",
                              .title = "reviewer",
                              .description = "Check the notes",
                              .cwd = "/w",
                              .tool_call_id = "call_sub",
                              .cancellable = true,
                              .state = SubagentChanged::State::Running};
  EXPECT_EQ(encode_update(hello), (json::object{{"sessionUpdate", "subagent_update"},
                                                {"sessionId", "ses_child"},
                                                {"title", "reviewer"},
                                                {"description", "Check the notes"},
                                                {"cwd", "/w"},
                                                {"capabilities", json::object{{"cancel", json::object{}}}},
                                                {"state", json::object{{"state", "running"}}},
                                                {"_meta", json::object{{"openvaala", json::object{{"toolCallId", "call_sub"}}}}}}));
  const SubagentChanged failed{
      .session_id = "ses_child", .state = SubagentChanged::State::Idle, .stop_reason = "error", .error = "model unreachable"};
  EXPECT_EQ(encode_update(failed),
            (json::object{{"sessionUpdate", "subagent_update"},
                          {"sessionId", "ses_child"},
                          {"state", json::object{{"state", "idle"},
                                                 {"stopReason", "error"},
                                                 {"error", json::object{{"code", -32603}, {"message", "model unreachable"}}}}}}))
      << "only what changed, and the failure as a JSON-RPC error";
  const SubagentChanged lost{.session_id = "ses_child", .state = SubagentChanged::State::Unknown};
  EXPECT_EQ(encode_update(lost).at("state"), (json::object{{"state", "unknown"}}));
}
