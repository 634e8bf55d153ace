// The persistent session store: records, writer, load (kill -9, corrupt lines, compaction),
// list (cwd filter, order, cursors), remove.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "runtime/server/session_updates.hpp"
#include "runtime/sessions/session_store.hpp"

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace runtime;
using namespace runtime::sessions;

namespace {

class SessionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("ov-sessions-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    root_ = dir_ / "sessions";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
  void append_raw(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary | std::ios::app) << text;
  }

  fs::path dir_, root_;
};

// What session/load shows of a loaded session, all of it (Replay reads it from the log in batches).
std::vector<SessionEvent> replayed(const std::optional<LoadedSession>& s) { return s->replay->rest(); }

Message user(std::string text) {
  Message m;
  m.role = Message::Role::User;
  m.text = std::move(text);
  return m;
}

Message assistant(std::string text, std::vector<ToolCall> calls = {}, std::string reasoning = {}) {
  Message m;
  m.role = Message::Role::Assistant;
  m.text = std::move(text);
  m.tool_calls = std::move(calls);
  m.reasoning = std::move(reasoning);
  return m;
}

Message tool(std::string id, std::string text, bool error = false) {
  Message m;
  m.role = Message::Role::Tool;
  m.tool_call_id = std::move(id);
  m.text = std::move(text);
  m.is_error = error;
  return m;
}

Header header(std::string id, std::string cwd = "/work/project") {
  return Header{std::move(id), std::move(cwd), "build", "default"};
}

SubagentChanged subagent_started(std::string id) {
  SubagentChanged c;
  c.session_id = std::move(id);
  c.title = "reviewer";
  c.description = "Check the notes";
  c.cwd = "/work/project";
  c.tool_call_id = "call_sub";
  c.cancellable = true;
  c.state = SubagentChanged::State::Running;
  return c;
}

std::vector<RecordBody> every_record_type() {
  Message u = user("look at this\nsecond line");
  u.images.push_back({"image/png", "iVBORw0KGgo="});
  json::array prompt{json::object{{"type", "text"}, {"text", "look at this"}},
                     json::object{{"type", "image"}, {"mimeType", "image/png"}, {"data", "iVBORw0KGgo="}}};
  ToolCallState tc;
  tc.tool_call_id = "call_1";
  tc.fields.title = "Read src/main.cpp";
  tc.fields.name = "read_file";
  tc.fields.kind = runtime::ToolKind::Read;
  tc.fields.status = runtime::ToolStatus::Completed;
  tc.fields.locations = std::vector<runtime::ToolLocation>{{"/work/project/src/main.cpp", 3}};
  tc.fields.raw_input = json::object{{"path", "src/main.cpp"}};
  tc.fields.raw_output = json::string("ok");
  tc.fields.content = std::vector<runtime::ToolContent>{
      runtime::TextContent{"int main"}, runtime::DiffContent{"/p/a.txt", std::nullopt, "new"},
      runtime::TerminalContent{"term_1"},
      runtime::BlockContent{json::object{{"type", "image"}, {"mimeType", "image/png"}, {"data", "AA=="}}}};
  Compaction c;
  c.summary = "we talked";
  c.replacement = {user("summary: we talked")};
  c.kept = 2;
  return {
      header("ses_1"),
      UserMessage{u, prompt},
      AssistantMessage{assistant("reading", {{"call_1", "read_file", R"({"path":"src/main.cpp"})"}}, "think first")},
      tc,
      ToolResult{tool("call_1", "int main() {}", true)},
      ModeChange{"accept_edits"},
      AgentChange{"plan"},
      ModelChange{"main/gpt-4.1-mini"},
      ThoughtLevelChange{"high"},
      TitleChange{"A title"},
      UsageRecord{Usage{1200, 34, 500}, runtime::Cost{0.0125, "EUR"}},
      c,
      TurnEnd{"end_turn"},
      PlanUpdate{{{"Read main.cpp", "completed"}}},
      SubagentRecord{subagent_started("ses_child")},
      ExecutorChange{"devbox"},
      ArchiveChange{true},
      SubagentMessage{"call_sub", assistant("the sub-agent's report", {}, "its thought")},
      PermissionMemory{"bash:npm test", true},
      Rewind{"msg_1"},
  };
}

}  // namespace

// ---- Records ----

TEST(SessionRecords, EveryTypeRoundTripsThroughJson) {
  const auto bodies = every_record_type();
  ASSERT_EQ(bodies.size(), std::variant_size_v<RecordBody>);
  std::set<std::string> types;
  for (const auto& body : bodies) {
    const Record r{body, "2026-01-02T03:04:05.678Z"};
    const json::object j = to_json(r);
    // Through text, as on disk.
    const json::value back_text = json::parse(json::serialize(j));
    const Record back = record_from_json(back_text.as_object());
    EXPECT_EQ(back.body.index(), body.index()) << json::serialize(j);
    EXPECT_EQ(back.time, r.time);
    EXPECT_EQ(to_json(back), j) << json::serialize(j);
    types.insert(record_type(body));
  }
  EXPECT_EQ(types.size(), bodies.size());
}

TEST(SessionRecords, MessageFieldsSurvive) {
  Message m = assistant("text", {{"a", "bash", "{\"cmd\":\"ls\"}"}, {"b", "read_file", ""}}, "why");
  m.id = "msg_1";
  const Message back = message_from_json(json::parse(json::serialize(message_to_json(m))).as_object());
  EXPECT_EQ(back.id, "msg_1") << "the messageId the editor saw is journaled";
  EXPECT_EQ(back.role, Message::Role::Assistant);
  EXPECT_EQ(back.text, "text");
  EXPECT_EQ(back.reasoning, "why");
  ASSERT_EQ(back.tool_calls.size(), 2u);
  EXPECT_EQ(back.tool_calls[0].name, "bash");
  EXPECT_EQ(back.tool_calls[0].arguments, "{\"cmd\":\"ls\"}");
  const Message t = message_from_json(message_to_json(tool("x", "boom", true)));
  EXPECT_EQ(t.role, Message::Role::Tool);
  EXPECT_EQ(t.tool_call_id, "x");
  EXPECT_TRUE(t.is_error);
}

TEST(SessionRecords, MalformedRecordsAreRejected) {
  EXPECT_THROW(record_from_json(json::object{{"type", "nope"}}), std::invalid_argument);
  EXPECT_THROW(record_from_json(json::object{{"t", "x"}}), std::invalid_argument);
  EXPECT_THROW(record_from_json(json::object{{"type", "user"}}), std::invalid_argument);
  // A user record carrying an assistant message.
  EXPECT_THROW(record_from_json(json::object{{"type", "user"}, {"message", message_to_json(assistant("x"))}}),
               std::invalid_argument);
  EXPECT_THROW(record_from_json(json::object{{"type", "header"}, {"id", 3}, {"cwd", "/"}}), std::invalid_argument);
}

TEST(SessionRecords, Iso8601) {
  EXPECT_EQ(iso8601(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso8601(1767323045678), "2026-01-02T03:04:05.678Z");
  EXPECT_EQ(parse_iso8601("2026-01-02T03:04:05.678Z"), 1767323045678);
  EXPECT_EQ(parse_iso8601("2026-01-02T03:04:05Z"), 1767323045000);
  EXPECT_EQ(parse_iso8601(iso8601(1234567890123)), 1234567890123);
  EXPECT_FALSE(parse_iso8601(""));
  EXPECT_FALSE(parse_iso8601("2026-01-02 nonsense"));
  EXPECT_FALSE(parse_iso8601("2026-13-02T03:04:05Z"));
  EXPECT_FALSE(parse_iso8601("2026-01-02T03:04:05.678+01:00"));
}

TEST(SessionRecords, TitleFromText) {
  EXPECT_EQ(title_from_text("  \n\n  Fix the build  \nmore"), "Fix the build");
  EXPECT_EQ(title_from_text(""), "");
  EXPECT_EQ(title_from_text(" \n \t\n"), "");
  const std::string long_line(200, 'x');
  const std::string t = title_from_text(long_line);
  EXPECT_EQ(t, std::string(80, 'x') + "\xE2\x80\xA6");
  // Cut on code points, never inside a UTF-8 sequence.
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "\xC3\xA9";  // é
  const std::string ta = title_from_text(accents, 10);
  EXPECT_EQ(ta, std::string(accents.substr(0, 20)) + "\xE2\x80\xA6");
  EXPECT_EQ(title_from_text(std::string(80, 'y')), std::string(80, 'y'));
}

TEST(SessionRecords, ValidIds) {
  EXPECT_TRUE(valid_session_id("ses_0123abcd"));
  EXPECT_TRUE(valid_session_id("a-b.c_D"));
  EXPECT_FALSE(valid_session_id(""));
  EXPECT_FALSE(valid_session_id(".hidden"));
  EXPECT_FALSE(valid_session_id("../etc/passwd"));
  EXPECT_FALSE(valid_session_id("a/b"));
  EXPECT_FALSE(valid_session_id(std::string(129, 'a')));
}

// ---- Writer and load ----

TEST_F(SessionStoreTest, EveryRecordTypeRoundTripsThroughTheFile) {
  SessionStore store(root_);
  {
    SessionWriter w = store.create(header("ses_1"));
    for (const auto& body : every_record_type())
      if (!std::holds_alternative<Header>(body)) w.append(body);
    w.turn_boundary();
  }
  // Line by line, the file holds exactly the records.
  std::istringstream lines(read(store.file_of("ses_1")));
  std::string line;
  std::vector<Record> recs;
  while (std::getline(lines, line)) recs.push_back(record_from_json(json::parse(line).as_object()));
  const auto bodies = every_record_type();
  ASSERT_EQ(recs.size(), bodies.size());
  for (std::size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(recs[i].body.index(), bodies[i].index());
    EXPECT_TRUE(parse_iso8601(recs[i].time)) << recs[i].time;
    Record expect{bodies[i], recs[i].time};
    EXPECT_EQ(to_json(recs[i]), to_json(expect));
  }
}

TEST_F(SessionStoreTest, LoadRebuildsTheSession) {
  SessionStore store(root_);
  {
    SessionWriter w = store.create(header("ses_a"));
    Message u = user("Please read main.cpp\nand explain");
    u.images.push_back({"image/png", "AAAA"});
    w.append(Record{UserMessage{u, {}}, "2026-01-01T10:00:00.000Z"});
    w.append(AssistantMessage{assistant("Let me look.", {{"call_1", "read_file", "{\"path\":\"main.cpp\"}"}}, "hmm")});
    ToolCallState pending{"call_1", {}};
    pending.fields.title = "Read main.cpp";
    pending.fields.kind = runtime::ToolKind::Read;
    pending.fields.status = runtime::ToolStatus::Pending;
    pending.fields.raw_input = json::object{{"path", "main.cpp"}};
    w.append(pending);
    ToolCallState done{"call_1", {}};
    done.fields.status = runtime::ToolStatus::Completed;
    done.fields.content = std::vector<runtime::ToolContent>{runtime::TextContent{"int main(){}"}};
    done.fields.locations = std::vector<runtime::ToolLocation>{{"/work/project/main.cpp", std::nullopt}};
    w.append(done);
    w.append(ToolResult{tool("call_1", "int main(){}")});
    w.append(UsageRecord{{100, 10}, runtime::Cost{0.5, "USD"}});
    w.append(AssistantMessage{assistant("It is empty.")});
    w.append(UsageRecord{{150, 20}, runtime::Cost{0.25, "USD"}});
    w.append(ModeChange{"accept_edits"});
    w.append(AgentChange{"plan"});
    w.append(ModelChange{"main/gpt-4.1-mini"});
    w.append(ThoughtLevelChange{"low"});
    w.append(ExecutorChange{"devbox"});
    w.append(Record{TurnEnd{"end_turn"}, "2026-01-01T10:00:05.000Z"});
    w.turn_boundary();
  }
  auto s = store.load("ses_a");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->warnings.empty()) << s->warnings.front();
  EXPECT_EQ(s->id, "ses_a");
  EXPECT_EQ(s->cwd, "/work/project");
  EXPECT_EQ(s->agent, "plan");
  EXPECT_EQ(s->executor, "devbox") << "the session's executor is kept";
  EXPECT_EQ(s->mode, "accept_edits");
  EXPECT_EQ(s->model, "main/gpt-4.1-mini") << "the model picked in the editor is kept across session/load";
  EXPECT_EQ(s->reasoning_effort, "low") << "the thought level picked in the editor is kept across session/load";
  EXPECT_EQ(s->title, "Please read main.cpp");
  EXPECT_EQ(s->updated_at, "2026-01-01T10:00:05.000Z");
  EXPECT_FALSE(s->created_at.empty());
  EXPECT_EQ(s->turns, 1);
  EXPECT_EQ(s->last_stop_reason, "end_turn");
  EXPECT_FALSE(s->interrupted);
  EXPECT_EQ(s->records, 15u);
  EXPECT_EQ(s->usage_total.input_tokens, 250);
  EXPECT_EQ(s->usage_total.output_tokens, 30);
  EXPECT_DOUBLE_EQ(s->cost["USD"], 0.75) << "the session's cost is the sum of its priced requests";
  ASSERT_TRUE(s->last_usage);
  EXPECT_EQ(s->last_usage->input_tokens, 150);

  ASSERT_EQ(s->conversation.size(), 4u);
  EXPECT_EQ(s->conversation[0].role, Message::Role::User);
  ASSERT_EQ(s->conversation[0].images.size(), 1u);
  EXPECT_EQ(s->conversation[0].images[0].data_base64, "AAAA");
  EXPECT_EQ(s->conversation[1].tool_calls.size(), 1u);
  EXPECT_EQ(s->conversation[1].reasoning, "hmm");
  EXPECT_EQ(s->conversation[2].role, Message::Role::Tool);
  EXPECT_EQ(s->conversation[3].text, "It is empty.");

  // Replay: user text + image, thought, agent text, the tool call (merged), agent text.
  const auto replay = replayed(s);
  ASSERT_EQ(replay.size(), 6u);
  ASSERT_TRUE(std::holds_alternative<runtime::UserContent>(replay[0]));
  EXPECT_EQ(std::get<runtime::UserContent>(replay[0]).block.at("text"), "Please read main.cpp\nand explain");
  ASSERT_TRUE(std::holds_alternative<runtime::UserContent>(replay[1]));
  EXPECT_EQ(std::get<runtime::UserContent>(replay[1]).block.at("type"), "image");
  ASSERT_TRUE(std::holds_alternative<runtime::ThoughtDelta>(replay[2]));
  ASSERT_TRUE(std::holds_alternative<runtime::TextDelta>(replay[3]));
  EXPECT_EQ(std::get<runtime::TextDelta>(replay[3]).text, "Let me look.");
  ASSERT_TRUE(std::holds_alternative<runtime::ToolCallBegin>(replay[4]))
      << "the tool call is replayed once, in its merged final state";
  const auto& tc = std::get<runtime::ToolCallBegin>(replay[4]);
  EXPECT_EQ(tc.id, "call_1");
  EXPECT_EQ(tc.fields.title, "Read main.cpp");
  EXPECT_EQ(tc.fields.kind, runtime::ToolKind::Read);
  EXPECT_EQ(tc.fields.status, runtime::ToolStatus::Completed);
  ASSERT_TRUE(tc.fields.content);
  ASSERT_TRUE(tc.fields.locations);
  ASSERT_TRUE(tc.fields.raw_input);
  EXPECT_EQ(tc.fields.raw_input->at("path"), "main.cpp");
  ASSERT_TRUE(std::holds_alternative<runtime::TextDelta>(replay[5]));
  EXPECT_EQ(std::get<runtime::TextDelta>(replay[5]).text, "It is empty.");
}

TEST_F(SessionStoreTest, PromptBlocksAreReplayedAndTitleComesFromThem) {
  SessionStore store(root_);
  {
    SessionWriter w = store.create(header("ses_p"));
    // The model saw injected context; the user typed only the prompt.
    UserMessage u{user("<AGENTS.md>rules</AGENTS.md>\nFix the tests"), json::array{}};
    u.prompt.push_back(json::object{{"type", "text"}, {"text", "Fix the tests"}});
    u.prompt.push_back(json::object{{"type", "resource_link"}, {"uri", "file:///a.cpp"}, {"name", "a.cpp"}});
    w.append(u);
  }
  auto s = store.load("ses_p");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->title, "Fix the tests");
  const auto replay = replayed(s);
  ASSERT_EQ(replay.size(), 2u);
  ASSERT_TRUE(std::holds_alternative<runtime::UserContent>(replay[1]));
  EXPECT_EQ(std::get<runtime::UserContent>(replay[1]).block.at("type"), "resource_link");
  EXPECT_EQ(s->conversation[0].text, "<AGENTS.md>rules</AGENTS.md>\nFix the tests");
}

TEST_F(SessionStoreTest, PlansAreReplayedInPlaceAsPlanUpdates) {
  SessionStore store(root_);
  {
    SessionWriter w = store.create(header("ses_plan"));
    w.append(UserMessage{user("Port the parser"), json::array{}});
    w.append(PlanUpdate{{{"Read the parser", "in_progress"}, {"Port it", "pending"}}});
    w.append(AssistantMessage{assistant("Reading it now.")});
    w.append(PlanUpdate{{{"Read the parser", "completed"}, {"Port it", "in_progress"}}});
  }
  auto s = store.load("ses_plan");
  ASSERT_TRUE(s);
  const auto replay = replayed(s);
  ASSERT_EQ(replay.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<runtime::PlanShown>(replay[1]));
  EXPECT_TRUE(std::holds_alternative<runtime::TextDelta>(replay[2]));
  ASSERT_TRUE(std::holds_alternative<runtime::PlanShown>(replay[3]));
  const auto& last = std::get<runtime::PlanShown>(replay[3]).entries;
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[0].content, "Read the parser");
  EXPECT_EQ(last[0].status, "completed");
  EXPECT_EQ(last[1].status, "in_progress");
  EXPECT_EQ(s->conversation.size(), 2u) << "a plan is for the editor, not a message";
}

TEST_F(SessionStoreTest, TitleRecordWinsWhereverItIs) {
  SessionStore store(root_);
  SessionWriter w = store.create(header("ses_t"));
  EXPECT_EQ(w.title(), "");
  w.append(Record{UserMessage{user("first prompt"), {}}, "2026-03-04T05:06:07.000Z"});
  EXPECT_EQ(w.title(), "first prompt");
  EXPECT_EQ(w.updated_at(), "2026-03-04T05:06:07.000Z");
  w.turn_boundary();
  EXPECT_EQ(store.load("ses_t")->title, "first prompt");
  EXPECT_EQ(store.list().sessions.at(0).title, "first prompt");
  w.append(TitleChange{"Named by the model"});
  w.append(UserMessage{user("second prompt"), {}});
  w.turn_boundary();
  EXPECT_EQ(store.load("ses_t")->title, "Named by the model");
  EXPECT_EQ(store.list().sessions.at(0).title, "Named by the model");

  SessionWriter w2 = store.create(header("ses_t2"));
  w2.append(TitleChange{"Early title"});
  w2.append(UserMessage{user("a prompt"), {}});
  w2.turn_boundary();
  EXPECT_EQ(store.load("ses_t2")->title, "Early title");
  EXPECT_EQ(store.list(std::nullopt, std::nullopt, 0).sessions.size(), 2u);
}

TEST_F(SessionStoreTest, ImageOnlyFirstMessageTakesTheTitleFromTheNext) {
  SessionStore store(root_);
  SessionWriter w = store.create(header("ses_i"));
  Message img = user("");
  img.images.push_back({"image/png", "AA"});
  w.append(UserMessage{img, {}});
  w.append(UserMessage{user("what is in it?"), {}});
  w.append(TurnEnd{"end_turn"});
  w.append(UserMessage{user("a later question"), {}});
  w.turn_boundary();
  EXPECT_EQ(store.load("ses_i")->title, "what is in it?");
  EXPECT_EQ(store.list().sessions.at(0).title, "what is in it?");
  // load_summary reads user messages by their prefix once the title is known, not before.
  EXPECT_EQ(store.load_summary("ses_i")->title, "what is in it?");
}

// A kill -9 while a line is being written leaves part of it: load keeps everything before it.
TEST_F(SessionStoreTest, TruncatedLastLineIsSkipped) {
  SessionStore store(root_);
  {
    SessionWriter w = store.create(header("ses_k"));
    w.append(UserMessage{user("hello"), {}});
    w.append(AssistantMessage{assistant("hi there")});
    w.append(TurnEnd{"end_turn"});
    w.turn_boundary();
    w.append(UserMessage{user("second question"), {}});
    w.append(AssistantMessage{assistant("a long answer that the kill cuts in the middle")});
  }
  const fs::path f = store.file_of("ses_k");
  const std::string text = read(f);
  const std::size_t last_start = text.rfind('\n', text.size() - 2) + 1;
  fs::resize_file(f, last_start + (text.size() - last_start) / 2);

  auto s = store.load("ses_k");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_NE(s->warnings[0].find("half-written"), std::string::npos) << s->warnings[0];
  ASSERT_EQ(s->conversation.size(), 3u);
  EXPECT_EQ(s->conversation[2].text, "second question");
  EXPECT_TRUE(s->interrupted);
  EXPECT_EQ(s->turns, 1);

  // Resuming appends on a fresh line; the cut line stays skipped, the new records load.
  {
    SessionWriter w = store.open("ses_k");
    w.append(AssistantMessage{assistant("answer after restart")});
    w.append(TurnEnd{"end_turn"});
    w.turn_boundary();
  }
  s = store.load("ses_k");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->warnings.size(), 1u);
  ASSERT_EQ(s->conversation.size(), 4u);
  EXPECT_EQ(s->conversation[3].text, "answer after restart");
  EXPECT_FALSE(s->interrupted);
  EXPECT_EQ(s->turns, 2);
}

// A real kill -9 of a process that is appending: everything it appended loads, in order.
TEST_F(SessionStoreTest, KillNineWhileAppending) {
  SessionStore store(root_);
  store.create(header("ses_kill"));
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      SessionWriter w = store.open("ses_kill");
      for (int i = 0;; ++i) {
        w.append(UserMessage{user("message " + std::to_string(i) + " " + std::string(500 + i % 700, 'x')), {}});
        if (i % 50 == 49) w.turn_boundary();
      }
    } catch (...) {
    }
    ::_exit(1);
  }
  const fs::path f = store.file_of("ses_kill");
  for (int i = 0; i < 2000 && fs::file_size(f) < 2'000'000; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto s = store.load("ses_kill");
  ASSERT_TRUE(s);
  EXPECT_LE(s->warnings.size(), 1u);  // at most the line being written
  ASSERT_GT(s->conversation.size(), 100u);
  for (std::size_t i = 0; i < s->conversation.size(); ++i)
    ASSERT_EQ(s->conversation[i].text.rfind("message " + std::to_string(i) + " ", 0), 0u) << i;
  // And the session goes on.
  SessionWriter w = store.open("ses_kill");
  w.append(AssistantMessage{assistant("after the crash")});
  w.turn_boundary();
  auto s2 = store.load("ses_kill");
  EXPECT_EQ(s2->conversation.back().text, "after the crash");
  EXPECT_EQ(s2->conversation.size(), s->conversation.size() + 1);
}

TEST_F(SessionStoreTest, GarbageTailAndCorruptMiddleLinesAreSkipped) {
  SessionStore store(root_);
  {
    SessionWriter w = store.create(header("ses_g"));
    w.append(UserMessage{user("one"), {}});
    w.append(AssistantMessage{assistant("two")});
  }
  const fs::path f = store.file_of("ses_g");
  append_raw(f, "{\"type\":\"assistant\",\"message\":{\"role\"\n");  // cut JSON, complete line
  append_raw(f, "not json at all\n");
  append_raw(f, "[1,2,3]\n");
  append_raw(f, "{\"type\":\"from_the_future\",\"t\":\"2026-01-01T00:00:00Z\"}\n");
  append_raw(f, "\n   \n");  // blank lines are not records and not errors
  {
    SessionWriter w = store.open("ses_g");
    w.append(UserMessage{user("three"), {}});
  }
  append_raw(f, std::string("\x00\xff\xfe garbage", 11));

  auto s = store.load("ses_g");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->warnings.size(), 5u);
  ASSERT_EQ(s->conversation.size(), 3u);
  EXPECT_EQ(s->conversation[0].text, "one");
  EXPECT_EQ(s->conversation[1].text, "two");
  EXPECT_EQ(s->conversation[2].text, "three");
  EXPECT_EQ(s->cwd, "/work/project");
}

TEST_F(SessionStoreTest, MissingHeaderIsNotFatal) {
  SessionStore store(root_);
  fs::create_directories(root_);
  write(store.file_of("ses_h"), "garbage\n" + json::serialize(to_json(Record{UserMessage{user("hi"), {}}, "2026-01-01T00:00:00Z"})) + "\n");
  auto s = store.load("ses_h");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cwd, "");
  EXPECT_EQ(s->conversation.size(), 1u);
  EXPECT_EQ(s->warnings.size(), 2u);
  EXPECT_TRUE(store.list().sessions.empty());  // SessionInfo needs a cwd
}

TEST_F(SessionStoreTest, InterruptedToolCallsGetResultsAndFailedStatus) {
  SessionStore store(root_);
  {
    SessionWriter w = store.create(header("ses_x"));
    w.append(UserMessage{user("run both"), {}});
    w.append(AssistantMessage{assistant("", {{"c1", "bash", "{}"}, {"c2", "bash", "{}"}})});
    runtime::ToolCallFields ls, sleep;
    ls.title = "ls";
    ls.status = runtime::ToolStatus::Completed;
    sleep.title = "sleep";
    sleep.status = runtime::ToolStatus::InProgress;
    w.append(ToolCallState{"c1", ls});
    w.append(ToolCallState{"c2", sleep});
    w.append(ToolResult{tool("c1", "a b c")});
    // kill -9 here
  }
  auto s = store.load("ses_x");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->interrupted);
  ASSERT_EQ(s->conversation.size(), 4u);
  EXPECT_EQ(s->conversation[2].tool_call_id, "c1");
  EXPECT_FALSE(s->conversation[2].is_error);
  EXPECT_EQ(s->conversation[3].tool_call_id, "c2");
  EXPECT_TRUE(s->conversation[3].is_error);
  const auto replay = replayed(s);
  ASSERT_EQ(replay.size(), 3u);
  EXPECT_EQ(std::get<runtime::ToolCallBegin>(replay[1]).fields.status, runtime::ToolStatus::Completed);
  EXPECT_EQ(std::get<runtime::ToolCallBegin>(replay[2]).fields.status, runtime::ToolStatus::Failed)
      << "a tool call still running when the server died is shown as failed";
  EXPECT_EQ(s->warnings.size(), 1u);
}

TEST_F(SessionStoreTest, ALongRunningToolCallDoesNotHoldTheReplayBack) {
  // Promise: the replay is streamed with bounded memory. A tool call is shown where it began, in
  // its final state, so what follows it waits for it; a call whose end is more than about 1 MiB
  // of log away is shown as it stands, and its end follows as an update. A new prompt ends every
  // call of the turn before it (the server died in it): shown as failed, in place.
  SessionStore store(root_);
  {
    SessionWriter w = store.create(header("ses_long"));
    w.append(UserMessage{user("watch it"), {}});
    w.append(AssistantMessage{assistant("", {{"slow", "bash", "{}"}})});
    runtime::ToolCallFields slow;
    slow.title = "tail -f";
    slow.status = runtime::ToolStatus::InProgress;
    w.append(ToolCallState{"slow", slow});
    for (int i = 0; i < 40; ++i) {  // 40 parallel calls of 40 KB each: 1.6 MB of log
      runtime::ToolCallFields quick;
      quick.title = "read " + std::to_string(i);
      quick.status = runtime::ToolStatus::Completed;
      quick.content = std::vector<runtime::ToolContent>{runtime::TextContent{std::string(40'000, 'q')}};
      w.append(ToolCallState{"quick" + std::to_string(i), quick});
    }
    runtime::ToolCallFields done;
    done.status = runtime::ToolStatus::Completed;
    w.append(ToolCallState{"slow", done});
    w.append(TurnEnd{"end_turn"});
    // The next turn's call never ends (kill -9), and the prompt after it shows it failed.
    w.append(UserMessage{user("again"), {}});
    runtime::ToolCallFields cut;
    cut.status = runtime::ToolStatus::Pending;
    w.append(ToolCallState{"cut", cut});
    w.append(UserMessage{user("after the crash"), {}});
    w.append(AssistantMessage{assistant("answered")});
  }
  auto s = store.load("ses_long");
  ASSERT_TRUE(s);
  // One line a batch: the batch each event came in tells what was held back.
  std::vector<SessionEvent> seen;
  std::vector<std::size_t> batch_of;
  for (auto batch = s->replay->next(1); !batch.empty(); batch = s->replay->next(1))
    for (auto& e : batch) {
      seen.push_back(std::move(e));
      batch_of.push_back(batch_of.empty() ? 0 : batch_of.back() + (&e == &batch.front()));
    }
  ASSERT_EQ(seen.size(), 1u + 1 + 40 + 1 + 1 + 1 + 1 + 1) << "prompt, slow, 40 quick, slow's end, prompt, cut, prompt, answer";
  const auto& slow_shown = std::get<runtime::ToolCallBegin>(seen[1]);
  EXPECT_EQ(slow_shown.id, "slow");
  EXPECT_EQ(slow_shown.fields.status, runtime::ToolStatus::InProgress)
      << "a call whose end is over the bound away is shown as it stands, not held";
  for (int i = 0; i < 40; ++i) EXPECT_EQ(std::get<runtime::ToolCallBegin>(seen[2 + i]).id, "quick" + std::to_string(i));
  const auto& slow_end = std::get<runtime::ToolCallUpdate>(seen[42]);
  EXPECT_EQ(slow_end.id, "slow");
  EXPECT_EQ(slow_end.fields.status, runtime::ToolStatus::Completed) << "its end follows as an update";
  const auto& cut_shown = std::get<runtime::ToolCallBegin>(seen[44]);
  EXPECT_EQ(cut_shown.id, "cut");
  EXPECT_EQ(cut_shown.fields.status, runtime::ToolStatus::Failed) << "a call the next prompt cut off is shown failed, in place";
  EXPECT_TRUE(std::holds_alternative<runtime::UserContent>(seen[45]));
  EXPECT_LT(batch_of[44], batch_of[46]) << "the prompt after the cut call releases it; it is not held to the end of the log";
}

TEST_F(SessionStoreTest, CompactionReplacesEarlierMessages) {
  SessionStore store(root_);
  SessionWriter w = store.create(header("ses_c"));
  for (int i = 0; i < 5; ++i) {
    w.append(UserMessage{user("q" + std::to_string(i)), {}});
    w.append(AssistantMessage{assistant("a" + std::to_string(i))});
    w.append(TurnEnd{"end_turn"});
  }
  w.append(Compaction{"they asked five questions", {}, 2});
  w.append(UserMessage{user("q5"), {}});
  w.append(AssistantMessage{assistant("a5")});
  w.turn_boundary();

  auto s = store.load("ses_c");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->conversation.size(), 5u);
  EXPECT_EQ(s->conversation[0].role, Message::Role::User);
  EXPECT_EQ(s->conversation[0].text, std::string(kCompactionSummaryPrefix) + "they asked five questions");
  EXPECT_EQ(s->conversation[1].text, "q4");
  EXPECT_EQ(s->conversation[2].text, "a4");
  EXPECT_EQ(s->conversation[3].text, "q5");
  EXPECT_EQ(s->conversation[4].text, "a5");
  EXPECT_EQ(s->title, "q0");
  // The editor still sees the whole history, with a notice.
  const auto replay = replayed(s);
  ASSERT_EQ(replay.size(), 13u);
  auto* shown = std::get_if<runtime::CompactionProgress>(&replay[10]);
  ASSERT_TRUE(shown) << "a compaction is replayed where it happened";
  EXPECT_EQ(shown->id, "compaction-1") << "an old record without an id is numbered";
  EXPECT_EQ(shown->status, runtime::CompactionStatus::Completed);
  EXPECT_EQ(shown->summary, std::optional<std::string>("they asked five questions"))
      << "promise: session/load shows a compaction with its summary";

  // A second compaction with explicit replacement messages (summary + AGENTS.md), keeping none.
  w.append(Compaction{"all of it", {user("S"), user("AGENTS.md: rules")}, 0, "compaction-7"});
  w.append(UserMessage{user("q6"), {}});
  auto s2 = store.load("ses_c");
  EXPECT_EQ(s2->compactions, 2);
  const auto replay2 = replayed(s2);
  auto* second = std::get_if<runtime::CompactionProgress>(&replay2.at(replay2.size() - 2));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->id, "compaction-7") << "promise: a replayed compaction keeps the id the editor saw live";
  ASSERT_EQ(s2->conversation.size(), 3u);
  EXPECT_EQ(s2->conversation[0].text, "S");
  EXPECT_EQ(s2->conversation[1].text, "AGENTS.md: rules");
  EXPECT_EQ(s2->conversation[2].text, "q6");
  // kept larger than the conversation keeps everything.
  w.append(Compaction{"x", {}, 1000});
  EXPECT_EQ(store.load("ses_c")->conversation.size(), 4u);
}

TEST_F(SessionStoreTest, CreateOpenErrors) {
  SessionStore store(root_);
  EXPECT_THROW(store.create(header("../evil")), std::invalid_argument);
  store.create(header("ses_dup"));
  EXPECT_THROW(store.create(header("ses_dup")), std::system_error);
  EXPECT_THROW(store.open("ses_missing"), std::system_error);
  EXPECT_FALSE(store.load("ses_missing"));
  EXPECT_FALSE(store.load("../../etc/passwd"));
  EXPECT_TRUE(store.exists("ses_dup"));
  EXPECT_EQ(fs::status(store.file_of("ses_dup")).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(SessionStoreTest, WriterIsMovable) {
  SessionStore store(root_);
  SessionWriter a = store.create(header("ses_m"));
  SessionWriter b = std::move(a);
  b.append(UserMessage{user("moved"), {}});
  SessionWriter c = store.create(header("ses_m2"));
  c = std::move(b);
  c.append(AssistantMessage{assistant("still")});
  c.turn_boundary();
  EXPECT_EQ(c.id(), "ses_m");
  EXPECT_EQ(store.load("ses_m")->conversation.size(), 2u);
}

// ---- List ----

namespace {

void make_session(SessionStore& store, const std::string& id, const std::string& cwd, const std::string& time,
                  const std::string& prompt, bool boundary = true) {
  SessionWriter w = store.create(header(id, cwd));
  w.append(Record{UserMessage{user(prompt), {}}, time});
  if (boundary) w.turn_boundary();
}

}  // namespace

TEST_F(SessionStoreTest, ListNewestFirstWithCwdFilter) {
  SessionStore store(root_);
  EXPECT_TRUE(store.list().sessions.empty());  // no directory yet
  make_session(store, "s1", "/p/a", "2026-01-01T00:00:01.000Z", "first");
  make_session(store, "s2", "/p/b", "2026-01-01T00:00:03.000Z", "second");
  make_session(store, "s3", "/p/a", "2026-01-01T00:00:02.000Z", "third");
  make_session(store, "s4", "/p/a", "2026-01-01T00:00:02.000Z", "tie");

  auto all = store.list();
  ASSERT_EQ(all.sessions.size(), 4u);
  EXPECT_FALSE(all.next_cursor);
  EXPECT_EQ(all.sessions[0].id, "s2");
  EXPECT_EQ(all.sessions[1].id, "s3");  // same time: by id
  EXPECT_EQ(all.sessions[2].id, "s4");
  EXPECT_EQ(all.sessions[3].id, "s1");
  EXPECT_EQ(all.sessions[0].title, "second");
  EXPECT_EQ(all.sessions[0].updated_at, "2026-01-01T00:00:03.000Z");

  auto a = store.list(std::string("/p/a/"));
  ASSERT_EQ(a.sessions.size(), 3u);
  for (const auto& s : a.sessions) EXPECT_EQ(s.cwd, "/p/a");
  EXPECT_TRUE(store.list(std::string("/p/a/../b")).sessions.size() == 1u);
  EXPECT_TRUE(store.list(std::string("/p/c")).sessions.empty());
  EXPECT_EQ(all.sessions[0].id, "s2");
  EXPECT_EQ(all.sessions[0].cwd, "/p/b");
}

TEST_F(SessionStoreTest, ListPagination) {
  SessionStore store(root_);
  for (int i = 0; i < 25; ++i) {
    char t[40];
    std::snprintf(t, sizeof t, "2026-01-01T00:00:%02d.000Z", i);
    make_session(store, "s" + std::to_string(100 + i), i % 2 ? "/odd" : "/even", t, "p" + std::to_string(i));
  }
  std::vector<std::string> seen;
  std::optional<std::string> cursor;
  int pages = 0;
  do {
    auto page = store.list(std::nullopt, cursor, 10);
    ++pages;
    for (const auto& s : page.sessions) seen.push_back(s.id);
    cursor = page.next_cursor;
  } while (cursor);
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(seen.size(), 25u);
  for (int i = 0; i < 25; ++i) EXPECT_EQ(seen[i], "s" + std::to_string(124 - i));

  // With a filter.
  auto p1 = store.list(std::string("/odd"), std::nullopt, 5);
  ASSERT_EQ(p1.sessions.size(), 5u);
  ASSERT_TRUE(p1.next_cursor);
  auto p2 = store.list(std::string("/odd"), p1.next_cursor, 5);
  ASSERT_EQ(p2.sessions.size(), 5u);
  auto p3 = store.list(std::string("/odd"), p2.next_cursor, 5);
  ASSERT_EQ(p3.sessions.size(), 2u);
  EXPECT_FALSE(p3.next_cursor);
  EXPECT_EQ(p3.sessions.back().id, "s101");

  // A new session while paging does not shift later pages.
  auto q1 = store.list(std::nullopt, std::nullopt, 10);
  make_session(store, "snew", "/even", "2026-02-01T00:00:00.000Z", "newest");
  auto q2 = store.list(std::nullopt, q1.next_cursor, 10);
  EXPECT_EQ(q2.sessions.front().id, "s114");
  // A removed cursor session still works as a position.
  store.remove(q1.sessions.back().id);
  EXPECT_EQ(store.list(std::nullopt, q1.next_cursor, 10).sessions.front().id, "s114");
}

TEST_F(SessionStoreTest, BadCursorIsInvalid) {
  SessionStore store(root_);
  make_session(store, "s1", "/p", "2026-01-01T00:00:01.000Z", "x");
  EXPECT_THROW(store.list(std::nullopt, std::string("garbage"), 10), InvalidCursor);
  EXPECT_THROW(store.list(std::nullopt, std::string(""), 10), InvalidCursor);
  EXPECT_THROW(store.list(std::nullopt, std::string("abc"), 10), InvalidCursor);
  EXPECT_THROW(store.list(std::nullopt, std::string("7631"), 10), InvalidCursor);  // "v1" alone
  try {
    store.list(std::nullopt, std::string("zz"), 10);
    FAIL();
  } catch (const std::invalid_argument&) {  // InvalidCursor is an invalid_argument
  }
}

TEST_F(SessionStoreTest, ListReadsTheLogWhenTheSidecarIsStaleOrBroken) {
  SessionStore store(root_);
  // Killed before the first turn boundary after the prompt: the sidecar has no title.
  make_session(store, "s1", "/p", "2026-01-01T00:00:05.000Z", "unsynced prompt", /*boundary=*/false);
  auto l = store.list();
  ASSERT_EQ(l.sessions.size(), 1u);
  EXPECT_EQ(l.sessions[0].title, "unsynced prompt");
  EXPECT_EQ(l.sessions[0].updated_at, "2026-01-01T00:00:05.000Z");

  make_session(store, "s2", "/p", "2026-01-01T00:00:06.000Z", "broken sidecar");
  write(store.meta_of("s2"), "{not json");
  make_session(store, "s3", "/p", "2026-01-01T00:00:07.000Z", "no sidecar");
  fs::remove(store.meta_of("s3"));
  l = store.list();
  ASSERT_EQ(l.sessions.size(), 3u);
  EXPECT_EQ(l.sessions[0].title, "no sidecar");
  EXPECT_EQ(l.sessions[1].title, "broken sidecar");
  EXPECT_EQ(l.sessions[2].title, "unsynced prompt");

  // The sidecar is what list reads when it is current.
  make_session(store, "s4", "/p", "2026-01-01T00:00:08.000Z", "from log");
  auto m4 = json::parse(read(store.meta_of("s4"))).as_object();
  m4["title"] = "from sidecar";
  write(store.meta_of("s4"), json::serialize(m4));
  EXPECT_EQ(store.list().sessions[0].title, "from sidecar");
  // Other files in the directory are ignored.
  write(root_ / "notes.txt", "x");
  write(root_ / "s4.meta.json.tmp123", "x");
  EXPECT_EQ(store.list().sessions.size(), 4u);
}

TEST_F(SessionStoreTest, ArchivedSessionsAreFilteredFromTheSidecarOrTheLogAndUnarchivingListsThemAgain) {
  SessionStore store(root_);
  make_session(store, "s1", "/p", "2026-01-01T00:00:05.000Z", "kept");
  make_session(store, "s2", "/p", "2026-01-01T00:00:06.000Z", "archived");
  {
    auto w = store.open("s2");
    w.append(ArchiveChange{true});
    w.turn_boundary();
  }
  auto ids = [](const ListPage& page) {
    std::vector<std::string> out;
    for (const auto& s : page.sessions) out.push_back(s.id + (s.archived ? "(archived)" : ""));
    return out;
  };
  EXPECT_EQ(ids(store.list()), (std::vector<std::string>{"s1"})) << "the default list leaves archived sessions out";
  EXPECT_EQ(ids(store.list({}, {}, 0, ArchiveFilter::Only)), (std::vector<std::string>{"s2(archived)"}));
  EXPECT_EQ(ids(store.list({}, {}, 0, ArchiveFilter::Include)).size(), 2u);
  fs::remove(store.meta_of("s2"));  // no sidecar: the log says it is archived
  EXPECT_EQ(ids(store.list({}, {}, 0, ArchiveFilter::Only)), (std::vector<std::string>{"s2(archived)"}))
      << "the archive state is read from the log when the sidecar is missing";
  EXPECT_TRUE(store.load("s2")->archived);
  {
    auto w = store.open("s2");
    EXPECT_TRUE(w.archived()) << "a writer opened on an archived session knows it (its sidecar keeps saying so)";
    w.append(ArchiveChange{false});
    w.turn_boundary();
  }
  EXPECT_EQ(ids(store.list()).size(), 2u) << "an unarchived session is listed again";
}

TEST_F(SessionStoreTest, RememberedAnswersAreLoadedAsTheLastRecordsLeftThemAndAClearForgetsEarlierOnes) {
  SessionStore store(root_);
  make_session(store, "s1", "/p", "2026-01-01T00:00:05.000Z", "answers");
  {
    auto w = store.open("s1");
    w.append(PermissionMemory{"bash:rm", true});
    w.append(PermissionMemory{});  // /permissions clear
    w.append(PermissionMemory{"bash:npm test", true});
    w.append(PermissionMemory{"edit:/p", true});
    w.append(PermissionMemory{"edit:/p", false});
    w.turn_boundary();
  }
  const auto loaded = store.load("s1");
  ASSERT_TRUE(loaded);
  const std::map<std::string, bool> expected{{"bash:npm test", true}, {"edit:/p", false}};
  EXPECT_EQ(loaded->remembered_permissions, expected)
      << "a load remembers each key's last answer, and nothing from before a clear";
  EXPECT_THROW(record_from_json(json::parse(R"({"type":"permission","t":"","key":"bash:ls"})").as_object()),
               std::invalid_argument)
      << "a permission record with a key but no answer is not read as a refusal or an allow";
}

// ---- Remove ----

TEST_F(SessionStoreTest, RemoveIsIdempotent) {
  SessionStore store(root_);
  make_session(store, "s1", "/p", "2026-01-01T00:00:01.000Z", "x");
  make_session(store, "s2", "/p", "2026-01-01T00:00:02.000Z", "y");
  EXPECT_TRUE(store.remove("s1"));
  EXPECT_FALSE(store.remove("s1"));
  EXPECT_FALSE(store.remove("never"));
  EXPECT_FALSE(store.remove("../x"));
  EXPECT_FALSE(store.load("s1"));
  EXPECT_FALSE(fs::exists(store.meta_of("s1")));
  auto l = store.list();
  ASSERT_EQ(l.sessions.size(), 1u);
  EXPECT_EQ(l.sessions[0].id, "s2");
}

// ---- Fork ----

TEST_F(SessionStoreTest, AForkCopiesTheSourcesRecordsUnderItsOwnHeaderAndLeavesTheSourceAlone) {
  SessionStore store(root_);
  {
    SessionWriter w = store.create(Header{"src", "/p/a", "build", "default"});
    w.append(ModeChange{"full_auto"});
    w.append(UserMessage{user("first question"), {}});
    w.append(AssistantMessage{assistant("first answer")});
    w.append(TurnEnd{"end_turn"});
    w.turn_boundary();
  }
  const std::string source_before = read(store.file_of("src"));
  ASSERT_TRUE(store.fork("src", Header{"frk", "/p/b", "", ""}, std::nullopt, {}));
  EXPECT_EQ(read(store.file_of("src")), source_before) << "the source's journal is untouched";

  auto fork = store.load("frk");
  ASSERT_TRUE(fork);
  EXPECT_TRUE(fork->warnings.empty()) << fork->warnings.front();
  EXPECT_EQ(fork->cwd, "/p/b") << "the fork has the folder it was given";
  EXPECT_EQ(fork->agent, "build") << "and the source's agent and mode";
  EXPECT_EQ(fork->mode, "full_auto");
  ASSERT_EQ(fork->conversation.size(), 2u);
  EXPECT_EQ(fork->conversation[0].text, "first question");
  EXPECT_EQ(fork->conversation[1].text, "first answer");
  EXPECT_EQ(fork->turns, 1);
  EXPECT_EQ(fork->title, "first question (fork)") << "the fork says it is one, apart from its source in the list";
  EXPECT_EQ(store.load("src")->title, "first question") << "the source keeps its title";
  auto listed = store.list();
  ASSERT_EQ(listed.sessions.size(), 2u);
  EXPECT_EQ(listed.sessions[0].id, "frk") << "the fork is the newest";
  EXPECT_EQ(listed.sessions[0].title, "first question (fork)");
  EXPECT_EQ(listed.sessions[1].title, "first question");

  EXPECT_FALSE(store.fork("nobody", Header{"frk2", "/p", "", ""}, std::nullopt, {}));
  EXPECT_FALSE(store.exists("frk2"));
}

TEST_F(SessionStoreTest, AForkOfAnUntitledSessionIsUntitledAndTakesItsFirstMessageAsTitle) {
  SessionStore store(root_);
  { SessionWriter w = store.create(Header{"src", "/p/a", "build", "default"}); w.turn_boundary(); }
  ASSERT_TRUE(store.fork("src", Header{"frk", "/p/b", "", ""}, std::nullopt, {}));
  EXPECT_EQ(store.load("frk")->title, "") << "no \" (fork)\" title without a source title";
  {
    SessionWriter w = store.open("frk");
    w.append(UserMessage{user("own question"), {}});
    w.turn_boundary();
  }
  EXPECT_EQ(store.load("frk")->title, "own question");
}

TEST_F(SessionStoreTest, AForkWithALimitCopiesOnlyTheWholeLinesBeforeItThenTheTail) {
  SessionStore store(root_);
  std::uint64_t before_turn = 0;
  {
    SessionWriter w = store.create(Header{"src", "/p/a", "build", "default"});
    w.append(UserMessage{user("committed"), {}});
    w.append(TurnEnd{"end_turn"});
    before_turn = w.size();
    w.append(UserMessage{user("in flight"), {}});
    w.append(AssistantMessage{assistant("half")});
  }
  // A limit inside a line keeps only the lines before it.
  ASSERT_TRUE(store.fork("src", Header{"frk", "/p/a", "", ""}, before_turn + 5, {ModeChange{"read_only"}}));
  auto fork = store.load("frk");
  ASSERT_TRUE(fork);
  ASSERT_EQ(fork->conversation.size(), 1u);
  EXPECT_EQ(fork->conversation[0].text, "committed");
  EXPECT_FALSE(fork->interrupted);
  EXPECT_EQ(fork->mode, "read_only") << "the tail comes after the copied records";
  EXPECT_EQ(store.load("src")->conversation.size(), 3u) << "the source keeps its turn in flight";
}

// ---- Sub-agent sessions ----

TEST_F(SessionStoreTest, ASubAgentsSessionNamesItsParentAndIsNotListed) {
  SessionStore store(root_);
  make_session(store, "parent", "/p", "2026-01-01T00:00:01.000Z", "x");
  {
    SessionWriter w = store.create(Header{"child", "/p", "reviewer", "default", "parent"});
    w.append(UserMessage{user("Check the notes"), {}});
    w.turn_boundary();
  }
  auto child = store.load("child");
  ASSERT_TRUE(child);
  EXPECT_EQ(child->parent, "parent");
  auto ids = [&] {
    std::vector<std::string> out;
    for (const auto& s : store.list().sessions) out.push_back(s.id);
    return out;
  };
  EXPECT_EQ(ids(), std::vector<std::string>{"parent"});
  fs::remove(store.meta_of("child"));  // read from the log when there is no sidecar
  EXPECT_EQ(ids(), std::vector<std::string>{"parent"});
}

TEST_F(SessionStoreTest, SubAgentSessionsAreReplayedAndOneTheServerLeftRunningEndsUnknown) {
  SessionStore store(root_);
  {
    SessionWriter w = store.create(header("parent"));
    w.append(SubagentRecord{subagent_started("done")});
    SubagentChanged end;
    end.session_id = "done";
    end.state = SubagentChanged::State::Idle;
    end.stop_reason = "end_turn";
    w.append(SubagentRecord{end});
    w.append(SubagentRecord{subagent_started("orphan")});
  }
  auto loaded = store.load("parent");
  ASSERT_TRUE(loaded);
  std::vector<std::pair<std::string, SubagentChanged::State>> seen;
  for (const auto& e : replayed(loaded))
    if (auto* c = std::get_if<SubagentChanged>(&e)) seen.emplace_back(c->session_id, c->state);
  using S = SubagentChanged::State;
  const std::vector<std::pair<std::string, S>> expected{
      {"done", S::Running}, {"done", S::Idle}, {"orphan", S::Running}, {"orphan", S::Unknown}};
  EXPECT_EQ(seen, expected);
}

// A sub-agent that ran inside its parent's session (an editor without sub-agent sessions): what
// it said is replayed where it was said, as the parent's answers were, and is never part of the
// parent's conversation (its tool calls are ordinary tool_call records).
TEST_F(SessionStoreTest, ASubAgentShownInsideItsParentIsReplayedButNotPartOfItsConversation) {
  SessionStore store(root_);
  {
    SessionWriter w = store.create(header("parent"));
    w.append(UserMessage{user("get it reviewed"), {}});
    w.append(AssistantMessage{assistant("", {{"call_sub", "spawn_agent", R"({"prompt":"review"})"}})});
    Message said = assistant("Report: fine.", {}, "looking");
    said.id = "msg_sub";
    w.append(SubagentMessage{"call_sub", said});
    w.append(ToolResult{tool("call_sub", "The reviewer agent finished")});
    w.append(TurnEnd{"end_turn"});
  }
  auto loaded = store.load("parent");
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->conversation.size(), 3u) << "the sub-agent's answer is not the parent model's";
  EXPECT_EQ(loaded->messages, 3u);
  EXPECT_TRUE(loaded->warnings.empty()) << loaded->warnings.front();
  std::vector<std::pair<std::string, std::string>> texts, thoughts;
  for (const auto& e : replayed(loaded)) {
    if (auto* t = std::get_if<TextDelta>(&e)) texts.emplace_back(t->text, t->message_id);
    if (auto* t = std::get_if<ThoughtDelta>(&e)) thoughts.emplace_back(t->text, t->message_id);
  }
  using P = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(texts, (P{{"Report: fine.", "msg_sub"}})) << "replayed with the message id shown live";
  EXPECT_EQ(thoughts, (P{{"looking", "msg_sub"}}));
}

// ---- session/load's replay, read back from the log a batch at a time ----

namespace {

// Every event as the editor gets it (the session/update encoder, every capability on; the log's
// text of a Journal* event spliced as the server sends it).
std::vector<std::string> encoded(const std::vector<SessionEvent>& events) {
  acp::ClientCapabilities caps;
  caps.subagents = caps.notices = caps.compaction = true;
  std::vector<std::string> out;
  for (const auto& e : events) {
    std::string text;
    if (const auto* c = std::get_if<runtime::JournalChunk>(&e)) runtime::server::append_journal_update(text, *c);
    else if (const auto* t = std::get_if<runtime::JournalToolCall>(&e)) runtime::server::append_journal_update(text, *t);
    else if (auto update = runtime::server::encode_update(e, caps)) text = json::serialize(*update);
    else text = "(none)";
    out.push_back(std::move(text));
  }
  return out;
}

// A session with every kind of shown record: prompts with blocks and without ids, thoughts,
// parallel tool calls whose states interleave with other records, a plan, a compaction, a
// sub-agent, a corrupt line, a blank line, and a tool call left running by a crash.
void write_varied_session(SessionStore& store, const std::string& id, const fs::path& file, int turns) {
  {
    SessionWriter w = store.create(header(id));
    for (int t = 0; t < turns; ++t) {
      const std::string n = std::to_string(t);
      Message u = user("question " + n + "\nwith a second line");
      if (t % 3 == 0) u.id = "msg_u" + n;  // the others are named by their line
      json::array prompt;
      if (t % 2 == 0) prompt = {json::object{{"type", "text"}, {"text", "question " + n}},
                                json::object{{"type", "resource_link"}, {"uri", "file:///a" + n}, {"name", "a"}}};
      w.append(UserMessage{u, prompt});
      Message a = assistant("answer " + n, {{"a" + n, "read_file", "{}"}, {"b" + n, "bash", "{}"}}, t % 2 ? "thinking " + n : "");
      a.id = "msg_a" + n;
      w.append(AssistantMessage{a});
      for (const char* call : {"a", "b"}) {
        ToolCallState pending;
        pending.tool_call_id = call + n;
        pending.fields.title = std::string("Run ") + call;
        pending.fields.kind = runtime::ToolKind::Read;
        pending.fields.status = runtime::ToolStatus::Pending;
        pending.fields.raw_input = json::object{{"n", t}};
        w.append(pending);
      }
      if (t % 4 == 1) w.append(PlanUpdate{{{"step " + n, "in_progress"}}});
      if (t == turns / 2) w.append(SubagentRecord{subagent_started("child" + n)});
      for (const char* call : {"b", "a"}) {
        if (t == turns - 1 && *call == 'a') continue;  // still running when the server died
        ToolCallState done;
        done.tool_call_id = call + n;
        done.fields.status = t % 5 ? runtime::ToolStatus::Completed : runtime::ToolStatus::Failed;
        done.fields.content = std::vector<runtime::ToolContent>{runtime::TextContent{std::string(300 + t, 'x')}};
        w.append(done);
        w.append(ToolResult{tool(call + n, "result")});
      }
      if (t == turns / 3) w.append(Compaction{"summary " + n, {}, 2});
      w.append(AssistantMessage{assistant("final " + n)});
      w.append(TurnEnd{"end_turn"});
      if (t == 7) w.append(AssistantMessage{assistant("")});  // shows nothing
    }
  }
  // A blank and a corrupt line in the middle of the log: the lines after them keep their numbers.
  std::string text = [&] {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }();
  std::size_t cut = 0;
  for (int i = 0; i < 40; ++i) cut = text.find('\n', cut) + 1;
  text.insert(cut, "\n{\"type\":\"user\",\"message\":\n");
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace

TEST_F(SessionStoreTest, ReplayIsTheSameWhateverTheBatchSize) {
  // Promise: session/load's replay is read back from the log in batches of about
  // Replay::kBatchBytes, in the order and with the content of the log, whatever the batch size.
  SessionStore store(root_);
  write_varied_session(store, "ses_v", store.file_of("ses_v"), 40);
  auto whole = store.load("ses_v");
  ASSERT_TRUE(whole);
  ASSERT_TRUE(whole->replay);
  const auto all = encoded(whole->replay->next(std::size_t(1) << 40));
  EXPECT_TRUE(whole->replay->next().empty());
  EXPECT_TRUE(whole->replay->done());

  auto small = store.load("ses_v");
  std::vector<SessionEvent> one_by_one;
  for (;;) {
    auto batch = small->replay->next(1);  // one record a batch
    if (batch.empty()) break;
    for (auto& e : batch) one_by_one.push_back(std::move(e));
  }
  EXPECT_EQ(encoded(one_by_one), all);
  EXPECT_EQ(encoded(replayed(store.load("ses_v"))), all);

  // What the log holds, in its order: the first prompt (named by its id), the corrupt line
  // skipped, the message ids from line numbers counting blank and corrupt lines.
  ASSERT_GT(all.size(), 200u);
  EXPECT_NE(all[0].find("\"messageId\":\"msg_u0\""), std::string::npos) << all[0];
  std::size_t tool_calls = 0, failed = 0, plans = 0, compactions = 0, subagents = 0, by_line = 0;
  for (const auto& u : all) {
    tool_calls += u.find("\"sessionUpdate\":\"tool_call\"") != std::string::npos;
    failed += u.find("\"status\":\"failed\"") != std::string::npos;
    plans += u.find("\"sessionUpdate\":\"plan\"") != std::string::npos;
    compactions += u.find("\"sessionUpdate\":\"compaction_update\"") != std::string::npos;
    subagents += u.find("\"state\":") != std::string::npos && u.find("child20") != std::string::npos;
    by_line += u.find("\"messageId\":\"msg_line") != std::string::npos;
  }
  EXPECT_EQ(tool_calls, 80u) << "each call once, in its merged final state";
  EXPECT_EQ(failed, 16u + 1u) << "every fifth turn's calls failed, and the one left running";
  EXPECT_EQ(plans, 10u);
  EXPECT_EQ(compactions, 1u);
  EXPECT_EQ(subagents, 2u) << "the sub-agent, and its end as unknown (the log ends with it running)";
  EXPECT_GT(by_line, 20u);
  EXPECT_EQ(whole->warnings.size(), 2u) << "the corrupt line and the interrupted tool call";
}

TEST_F(SessionStoreTest, ASummaryIsTheLoadWithoutItsConversationWhichIsReadLaterUpToWhereTheSummaryStopped) {
  // Promise: session/load answers from load_summary (the messages not parsed) and reads the
  // conversation after its answer, up to where the summary read: the same session as a whole
  // load, whatever was appended meanwhile.
  SessionStore store(root_);
  write_varied_session(store, "ses_s", store.file_of("ses_s"), 40);
  {
    SessionWriter w = store.open("ses_s");
    w.append(TitleChange{"Named by hand"});
    w.append(UserMessage{user("the last question"), {}});  // cut short: interrupted
  }
  auto whole = store.load("ses_s");
  auto summary = store.load_summary("ses_s");
  ASSERT_TRUE(whole && summary);
  EXPECT_TRUE(summary->conversation.empty());
  EXPECT_FALSE(summary->replay);
  EXPECT_EQ(summary->title, "Named by hand");
  EXPECT_EQ(summary->title, whole->title);
  EXPECT_EQ(summary->mode, whole->mode);
  EXPECT_EQ(summary->cwd, whole->cwd);
  EXPECT_EQ(summary->updated_at, whole->updated_at);
  EXPECT_EQ(summary->turns, whole->turns);
  EXPECT_EQ(summary->compactions, whole->compactions);
  // The corrupt user line in the middle starts like a record: the summary, which does not parse
  // it, counts it; a half-written last line is parsed (and skipped) by both.
  EXPECT_EQ(summary->records, whole->records + 1);
  EXPECT_EQ(summary->usage_total.input_tokens, whole->usage_total.input_tokens);
  EXPECT_TRUE(summary->interrupted) << "a prompt after the last turn end is read by its prefix";
  EXPECT_EQ(summary->interrupted, whole->interrupted);
  EXPECT_EQ(summary->log_bytes, fs::file_size(store.file_of("ses_s")));

  {
    SessionWriter w = store.open("ses_s");
    w.append(UserMessage{user("written after the answer"), {}});
  }
  EXPECT_EQ(summary->messages, whole->messages + 1);  // the corrupt user line again
  EXPECT_GE(summary->messages, whole->conversation.size()) << "room for the conversation, compactions aside";
  auto conversation = store.load_conversation(*summary);
  ASSERT_TRUE(conversation);
  ASSERT_EQ(conversation->size(), whole->conversation.size()) << "the conversation stops where the summary did";
  for (std::size_t i = 0; i < conversation->size(); ++i) {
    EXPECT_EQ((*conversation)[i].text, whole->conversation[i].text) << i;
    EXPECT_EQ((*conversation)[i].tool_call_id, whole->conversation[i].tool_call_id) << i;
  }
  LoadedSession gone;
  gone.id = "ses_gone";
  gone.log_bytes = 100;
  EXPECT_FALSE(store.load_conversation(gone));
}

TEST_F(SessionStoreTest, ReplayReadsWhatLoadReadEvenIfTheLogChangesAfter) {
  SessionStore store(root_);
  SessionWriter w = store.create(header("ses_r"));
  w.append(UserMessage{user("before"), {}});
  w.append(AssistantMessage{assistant("answer")});
  auto loaded = store.load("ses_r");
  ASSERT_TRUE(loaded);
  w.append(UserMessage{user("after the load"), {}});  // e.g. the session's next turn
  fs::remove(store.file_of("ses_r"));                  // session/delete meanwhile
  const auto shown = encoded(replayed(loaded));
  ASSERT_EQ(shown.size(), 2u) << "the log as load read it, from the file load opened";
  EXPECT_NE(shown[0].find("before"), std::string::npos);
  EXPECT_NE(shown[1].find("answer"), std::string::npos);
}

TEST_F(SessionStoreTest, OpenAfterLoadTakesTheSummaryAndEndsAHalfWrittenLine) {
  SessionStore store(root_);
  {
    SessionWriter w = store.create(header("ses_o"));
    w.append(UserMessage{user("the first prompt"), {}});
    w.append(ArchiveChange{true});
  }
  append_raw(store.file_of("ses_o"), R"({"type":"assistant","t":"2026-01-01T00:00:00.000Z","mess)");
  auto loaded = store.load("ses_o");
  ASSERT_TRUE(loaded);
  {
    SessionWriter w = store.open(*loaded);  // no second read of the log
    EXPECT_EQ(w.title(), "the first prompt");
    EXPECT_TRUE(w.archived());
    w.append(UserMessage{user("next"), {}});
    w.turn_boundary();
  }
  auto again = store.load("ses_o");
  ASSERT_TRUE(again);
  ASSERT_EQ(again->conversation.size(), 2u) << "the half line was ended, so the next record is whole";
  EXPECT_EQ(again->conversation[1].text, "next");
  const auto listed = store.list(std::nullopt, std::nullopt, 50, ArchiveFilter::Include).sessions;
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].title, "the first prompt") << "the sidecar has the loaded title";
  EXPECT_TRUE(listed[0].archived);
}

// ---- the replay as the log's text (Replay::Form::JournalText, what session/load sends) ----

namespace {

// `batch_of` (when given) gets the batch each event came in: what was held back, and how long.
std::vector<SessionEvent> all_of(Replay& replay, std::size_t batch_bytes, std::vector<std::size_t>* batch_of = nullptr) {
  std::vector<SessionEvent> out;
  std::size_t batches = 0;
  for (auto batch = replay.next(batch_bytes); !batch.empty(); batch = replay.next(batch_bytes), ++batches)
    for (auto& e : batch) {
      out.push_back(std::move(e));
      if (batch_of) batch_of->push_back(batches);
    }
  return out;
}

std::size_t journal_events(const std::vector<SessionEvent>& events) {
  return static_cast<std::size_t>(std::count_if(events.begin(), events.end(), [](const SessionEvent& e) {
    return std::holds_alternative<runtime::JournalChunk>(e) || std::holds_alternative<runtime::JournalToolCall>(e);
  }));
}

}  // namespace

TEST_F(SessionStoreTest, TheLogsTextReplaysExactlyWhatItsDecodedRecordsShow) {
  // Promise: session/load sends prompts, answers and tool calls as the log's own JSON text, and
  // the editor gets the very bytes decoding and encoding them gave: same updates, same order,
  // tool calls merged, held, bounded and failed the same, whatever the batch size.
  SessionStore store(root_);
  write_varied_session(store, "ses_v", store.file_of("ses_v"), 40);
  {
    SessionWriter w = store.create(header("ses_long"));
    w.append(UserMessage{user("watch it"), {}});
    runtime::ToolCallFields slow;
    slow.title = "tail -f";
    slow.status = runtime::ToolStatus::InProgress;
    w.append(ToolCallState{"slow", slow});
    for (int i = 0; i < 40; ++i) {  // 1.6 MB of log before slow's end: over the bound
      runtime::ToolCallFields quick;
      quick.status = runtime::ToolStatus::Completed;  // and no title: a new call gets ""
      quick.content = std::vector<runtime::ToolContent>{runtime::TextContent{std::string(40'000, 'q')}};
      w.append(ToolCallState{"quick" + std::to_string(i), quick});
    }
    runtime::ToolCallFields done;
    done.status = runtime::ToolStatus::Completed;
    w.append(ToolCallState{"slow", done});
    runtime::ToolCallFields cut;
    cut.title = "cut";
    cut.status = runtime::ToolStatus::Pending;
    w.append(ToolCallState{"cut", cut});
    const std::string odd = "after the crash: \"quoted\"\n\ttabbed, caf\xC3\xA9, \x01 \xF0\x9F\x98\x80";
    w.append(UserMessage{user(odd), json::array{json::object{{"type", "text"}, {"text", odd}}}});
    w.append(AssistantMessage{assistant("answered \\ \"here\"", {}, "thought\nover")});
    runtime::ToolCallFields never;
    never.status = runtime::ToolStatus::InProgress;
    w.append(ToolCallState{"never", never});
  }
  for (const char* id : {"ses_v", "ses_long"}) {
    SCOPED_TRACE(id);
    const auto decoded = encoded(all_of(*store.load(id)->replay, std::size_t(1) << 40));
    std::vector<std::size_t> decoded_batches;
    all_of(*store.load(id)->replay, 1, &decoded_batches);
    for (std::size_t batch : {std::size_t(1), Replay::kBatchBytes}) {
      auto replay = store.open_replay(id, Replay::Form::JournalText);
      ASSERT_TRUE(replay);
      std::vector<std::size_t> batches;
      const auto events = all_of(*replay, batch, &batches);
      if (batch == 1)
        EXPECT_EQ(batches, decoded_batches) << "a line a batch: each update must be held back exactly as long as "
                                               "when decoded (a call a prompt cut off is released at that prompt)";
      EXPECT_GT(journal_events(events), events.size() / 2) << "most of it must come out as the log's text";
      const auto as_text = encoded(events);
      ASSERT_EQ(as_text.size(), decoded.size()) << "batches of " << batch << " bytes";
      for (std::size_t i = 0; i < decoded.size(); ++i)
        EXPECT_EQ(as_text[i], decoded[i]) << "update " << i << ", batches of " << batch << " bytes";
    }
  }
}

TEST_F(SessionStoreTest, LinesNotInTheServersFormReplayAsTheirDecodedRecordsDo) {
  // Promise: a log the server did not write itself (edited by hand, another version) shows what
  // its records mean: each line the text reading does not take is decoded instead, a tool call
  // begun in one form and ended in the other included. Compared as JSON values: a hand-written
  // line may spell a string differently (\u00e9, \/) from how the encoder writes it.
  SessionStore store(root_);
  { SessionWriter w = store.create(header("ses_hand")); }
  append_raw(store.file_of("ses_hand"),
             R"({"type":"user","t":"2026-01-02T03:04:05.000Z","message":{"role":"user","id":"msg_1","text":"caf\u00e9 \/ok"},"prompt":[{"type":"text","text":"caf\u00e9 \/ok"},7]})" "\n"
             R"({"type":"user","t":"2026-01-02T03:04:05.000Z","message":{"role":"user","text":"no prompt blocks"}})" "\n"
             R"({"type":"assistant","t":"2026-01-02T03:04:05.000Z","message":{"role":"assistant","text":"plain","reasoning":""}})" "\n"
             R"({"type":"tool_call","t":"2026-01-02T03:04:05.000Z","toolCallId":"c1","title":"Read","kind":"read","status":"pending"})" "\n"
             R"({"type":"tool_call","t":"2026-01-02T03:04:05.000Z","toolCallId":"c\u0031","status":"completed","rawOutput":{"n":1}})" "\n"
             R"({"type":"tool_call","t":"2026-01-02T03:04:05.000Z","toolCallId":"c2","kind":"no such kind","status":"pending"})" "\n"
             R"({"type":"tool_call","t":"2026-01-02T03:04:05.000Z","toolCallId":"c2","title":"Two","status":"failed"})" "\n"
             R"({"type":"assistant","t":"2026-01-02T03:04:05.000Z","message":{"role":"assistant","text":"cut"})" "\n"
             R"({"type":"assistant","t":"2026-01-02T03:04:05.000Z","message":{"role":"assistant","text":"last"}})" "\n");
  const auto decoded = encoded(all_of(*store.load("ses_hand")->replay, 1));
  const auto events = all_of(*store.open_replay("ses_hand", Replay::Form::JournalText), 1);
  const auto as_text = encoded(events);
  ASSERT_EQ(as_text.size(), decoded.size());
  ASSERT_GE(decoded.size(), 5u) << "the test's log must show something";
  for (std::size_t i = 0; i < decoded.size(); ++i)
    EXPECT_EQ(json::parse(as_text[i]), json::parse(decoded[i])) << "update " << i << ": " << as_text[i];
  EXPECT_GT(journal_events(events), 0u);
}
