// The one session/update encoder: each engine event as the ACP schema has it, and a replayed
// tool call encoded like the live one.
#include <gtest/gtest.h>

#include "runtime/server/session_updates.hpp"

using namespace runtime;
using runtime::server::encode_update;
namespace json = boost::json;

namespace {
acp::ClientCapabilities client_with(bool notices, bool compaction) {
  acp::ClientCapabilities c;
  c.notices = notices;
  c.compaction = compaction;
  return c;
}
// Every event here has something to send (value() throws when the encoder sends nothing).
json::object encode(const SessionEvent& e, const acp::ClientCapabilities& client = {}) {
  return encode_update(e, client).value();
}
std::string chat_text(const json::object& update) {
  if (update.at("sessionUpdate") != "agent_message_chunk") {
    ADD_FAILURE() << "promise: a client without the view sees it as agent message text; got " << json::serialize(update);
    return {};
  }
  return std::string(update.at("content").at("text").as_string());
}
}  // namespace

TEST(SessionUpdates, TextAndThoughtAreChunks) {
  auto t = encode(TextDelta{"hi"});
  EXPECT_EQ(t.at("sessionUpdate"), "agent_message_chunk");
  EXPECT_EQ(t.at("content"), (json::object{{"type", "text"}, {"text", "hi"}}));
  EXPECT_EQ(encode(ThoughtDelta{"hmm"}).at("sessionUpdate"), "agent_thought_chunk");
  auto u = encode(UserContent{json::object{{"type", "text"}, {"text", "q"}}});
  EXPECT_EQ(u.at("sessionUpdate"), "user_message_chunk");
}

TEST(SessionUpdates, ChunksCarryTheirMessageIdAndEachNoticeIsAMessageOfItsOwn) {
  EXPECT_EQ(encode(TextDelta{"hi", "msg_a"}).at("messageId"), "msg_a");
  EXPECT_EQ(encode(ThoughtDelta{"hmm", "msg_a"}).at("messageId"), "msg_a");
  EXPECT_EQ(encode(UserContent{json::object{{"type", "text"}, {"text", "q"}}, "msg_u"}).at("messageId"), "msg_u");
  EXPECT_FALSE(encode(TextDelta{"hi"}).contains("messageId")) << "no id known: none sent";
  auto n1 = encode(Notice{NoticeSeverity::Warning, "Retrying"});
  auto n2 = encode(Notice{NoticeSeverity::Warning, "Retrying"});
  ASSERT_TRUE(n1.contains("messageId") && n2.contains("messageId")) << "a notice is a message of its own";
  EXPECT_NE(n1.at("messageId"), n2.at("messageId")) << "each notice is a new message";
  EXPECT_EQ(encode(Notice{NoticeSeverity::Info, "Compacted", "", "msg_line7"}).at("messageId"), "msg_line7") << "a replayed notice keeps its id";
}

TEST(SessionUpdates, ANoticeIsANoticeUpdateOnlyForAClientThatShowsNotices) {
  const Notice failed{NoticeSeverity::Error, "MCP server `x` could not start", "stdio: no such file"};
  EXPECT_EQ(encode(failed, client_with(true, false)),
            (json::object{{"sessionUpdate", "notice"}, {"severity", "error"}, {"title", "MCP server `x` could not start"},
                          {"description", "stdio: no such file"}}))
      << "promise: a client that advertised session.notices gets a notice with severity, title and description";
  EXPECT_EQ(encode(Notice{NoticeSeverity::Warning, "Retrying", ""}, client_with(true, false)),
            (json::object{{"sessionUpdate", "notice"}, {"severity", "warning"}, {"title", "Retrying"}}))
      << "no description: none sent";
  EXPECT_EQ(encode(Notice{NoticeSeverity::Info, "", "only detail"}, client_with(true, false)).at("title"), "only detail")
      << "the schema wants a non-empty title";
  EXPECT_EQ(chat_text(encode(failed)), "\n\n> MCP server `x` could not start: stdio: no such file\n\n")
      << "promise: without session.notices the notice is still shown, as a quoted line of the agent's message";
  EXPECT_EQ(chat_text(encode(Notice{NoticeSeverity::Info, "A hook said", "line one\nline two"})),
            "\n\n> A hook said: line one\n> line two\n\n")
      << "every line of a long description stays in the quote";
}

TEST(SessionUpdates, ACompactionIsItsOwnEntityOnlyForAClientWithACompactionView) {
  const auto view = client_with(false, true);
  EXPECT_EQ(encode(CompactionProgress{"compaction-1", CompactionStatus::InProgress, std::nullopt, {}, 0}, view),
            (json::object{{"sessionUpdate", "compaction_update"}, {"compactionId", "compaction-1"}, {"status", "in_progress"}}));
  EXPECT_EQ(encode(CompactionSummaryDelta{"compaction-1", "They asked"}, view),
            (json::object{{"sessionUpdate", "compaction_summary_chunk"},
                          {"compactionId", "compaction-1"},
                          {"content", json::object{{"type", "text"}, {"text", "They asked"}}}}));
  EXPECT_EQ(encode(CompactionProgress{"compaction-1", CompactionStatus::Completed, std::nullopt, {}, 4}, view),
            (json::object{{"sessionUpdate", "compaction_update"}, {"compactionId", "compaction-1"}, {"status", "completed"}}))
      << "live, the summary came as chunks";
  EXPECT_EQ(encode(CompactionProgress{"compaction-2", CompactionStatus::Completed, "S", {}, 0}, view).at("summary"),
            (json::array{json::object{{"type", "text"}, {"text", "S"}}}))
      << "promise: a replayed compaction carries its summary";
  auto failed = encode(CompactionProgress{"compaction-3", CompactionStatus::Failed, std::nullopt, "HTTP 500", 0}, view);
  EXPECT_EQ(failed.at("status"), "failed");
  EXPECT_EQ(failed.at("error"), "HTTP 500");
  EXPECT_EQ(encode(CompactionProgress{"compaction-4", CompactionStatus::Cancelled, std::nullopt, {}, 0}, view).at("status"),
            "cancelled");
  EXPECT_EQ(encode(CompactionProgress{"c", CompactionStatus::Completed, std::nullopt, {}, 4}, client_with(true, false))
                .at("sessionUpdate"),
            "agent_message_chunk")
      << "a notice view is not a compaction view";
}

TEST(SessionUpdates, WithoutACompactionViewACompactionIsTheChatTextItAlwaysWas) {
  EXPECT_EQ(chat_text(encode(CompactionProgress{"c", CompactionStatus::InProgress, std::nullopt, {}, 0})),
            "\n\n> Compacting the conversation: the model is summarising it to free context.\n\n");
  EXPECT_FALSE(encode_update(CompactionSummaryDelta{"c", "secret summary"}, {}))
      << "promise: without session.compaction the summary does not enter the chat";
  EXPECT_EQ(chat_text(encode(CompactionProgress{"c", CompactionStatus::Completed, std::nullopt, {}, 4})),
            "\n\n> Compacted 4 messages into a summary.\n\n");
  EXPECT_EQ(chat_text(encode(CompactionProgress{"c", CompactionStatus::Completed, "S", {}, 0})),
            "\n\n> The earlier conversation was summarised to fit the context window.\n\n")
      << "replayed";
  EXPECT_EQ(chat_text(encode(CompactionProgress{"c", CompactionStatus::Failed, std::nullopt, "HTTP 500", 0})),
            "\n\n> Compaction failed, the conversation is unchanged: HTTP 500\n\n");
}

TEST(SessionUpdates, TheClientAdvertisesNoticesAndCompactionWithAnObject) {
  auto caps = acp::ClientCapabilities::from_json(json::parse(R"({"session":{"notices":{},"compaction":{}}})"));
  EXPECT_TRUE(caps.notices);
  EXPECT_TRUE(caps.compaction);
  caps = acp::ClientCapabilities::from_json(json::parse(R"({"session":{"notices":null,"compaction":true}})"));
  EXPECT_FALSE(caps.notices) << "null means unsupported";
  EXPECT_FALSE(caps.compaction) << "only {} advertises the view";
  EXPECT_FALSE(acp::ClientCapabilities::from_json(json::parse(R"({"fs":{}})")).notices);
}

TEST(SessionUpdates, ToolCallsCarryEveryFieldInTheSchemaShape) {
  ToolCallFields f;
  f.title = "Edit a.txt";
  f.name = "apply_patch";
  f.kind = ToolKind::Edit;
  f.status = ToolStatus::Pending;
  f.locations = std::vector<ToolLocation>{{"/p/a.txt", 3}};
  f.raw_input = json::object{{"patch", "..."}};
  f.content = std::vector<ToolContent>{DiffContent{"/p/a.txt", std::nullopt, "new"}, TextContent{"note"},
                                       TerminalContent{"t1"},
                                       BlockContent{json::object{{"type", "image"}, {"data", "AA"}, {"mimeType", "image/png"}}}};
  auto o = encode(ToolCallBegin{"c1", f});
  EXPECT_EQ(o.at("sessionUpdate"), "tool_call");
  EXPECT_EQ(o.at("toolCallId"), "c1");
  EXPECT_EQ(o.at("kind"), "edit");
  EXPECT_EQ(o.at("name"), "apply_patch") << "the tool's programmatic name beside its title";
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
  auto up = encode(ToolCallUpdate{"c1", done});
  EXPECT_EQ(up.at("sessionUpdate"), "tool_call_update");
  EXPECT_EQ(up.at("status"), "failed");
  EXPECT_FALSE(up.contains("title")) << "an update sends only what changed";
  EXPECT_EQ(encode(ToolCallBegin{"c2", {}}).at("title"), "") << "a new tool call always has a title";
}

TEST(SessionUpdates, SessionLevelUpdates) {
  auto plan = encode(PlanShown{{{"Read", "completed"}, {"Write", "in_progress"}}});
  EXPECT_EQ(plan.at("sessionUpdate"), "plan");
  EXPECT_EQ(plan.at("entries").as_array()[1],
            (json::object{{"content", "Write"}, {"priority", "medium"}, {"status", "in_progress"}}));
  auto usage = encode(ContextUsage{10, 100});
  EXPECT_EQ(usage, (json::object{{"sessionUpdate", "usage_update"}, {"used", 10}, {"size", 100}}));
  auto priced = encode(ContextUsage{10, 100, Cost{0.5, "USD"}});
  EXPECT_EQ(priced.at("cost"), (json::object{{"amount", 0.5}, {"currency", "USD"}}));
  auto summed = encode(ContextUsage{10, 100, Cost{0.6 + 0.6 + 0.6, "USD"}});
  EXPECT_EQ(json::serialize(summed.at("cost").at("amount")), json::serialize(json::value(1.8)))
      << "a sum of prices is shown rounded, not as 1.7999999999999998";
  EXPECT_EQ(encode(ModeChanged{"read_only"}).at("currentModeId"), "read_only");
  auto cmds = encode(CommandsChanged{{{"review", "Reviews", "what to review"}, {"compact", "Compacts", ""}}});
  EXPECT_EQ(cmds.at("sessionUpdate"), "available_commands_update");
  const auto& list = cmds.at("availableCommands").as_array();
  EXPECT_EQ(list[0].at("input"), (json::object{{"hint", "what to review"}}));
  EXPECT_FALSE(list[1].as_object().contains("input")) << "a command without input has no input hint";
  auto title = encode(TitleChanged{"Fix it", ""});
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
  EXPECT_EQ(encode(hello), (json::object{{"sessionUpdate", "subagent_update"},
                                                {"sessionId", "ses_child"},
                                                {"title", "reviewer"},
                                                {"description", "Check the notes"},
                                                {"cwd", "/w"},
                                                {"capabilities", json::object{{"cancel", json::object{}}}},
                                                {"state", json::object{{"state", "running"}}},
                                                {"_meta", json::object{{"openvaala", json::object{{"toolCallId", "call_sub"}}}}}}));
  const SubagentChanged failed{
      .session_id = "ses_child", .state = SubagentChanged::State::Idle, .stop_reason = "error", .error = "model unreachable"};
  EXPECT_EQ(encode(failed),
            (json::object{{"sessionUpdate", "subagent_update"},
                          {"sessionId", "ses_child"},
                          {"state", json::object{{"state", "idle"},
                                                 {"stopReason", "error"},
                                                 {"error", json::object{{"code", -32603}, {"message", "model unreachable"}}}}}}))
      << "only what changed, and the failure as a JSON-RPC error";
  const SubagentChanged lost{.session_id = "ses_child", .state = SubagentChanged::State::Unknown};
  EXPECT_EQ(encode(lost).at("state"), (json::object{{"state", "unknown"}}));
}

TEST(SessionUpdates, CostsAreShownToSixSignificantDigits) {
  using runtime::server::shown_cost;
  EXPECT_EQ(shown_cost(1.7999999999999998), 1.8);
  EXPECT_EQ(shown_cost(0.1 + 0.2), 0.3);
  EXPECT_EQ(shown_cost(0.000123456789), 0.000123457) << "small amounts keep 6 significant digits, not cents";
  EXPECT_EQ(shown_cost(1234.5678), 1234.57);
  EXPECT_EQ(shown_cost(0), 0);
}
