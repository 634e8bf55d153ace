// Session records <-> JSON lines of the journal.
#include <ctime>
#include <chrono>
#include <cstdio>

#include "runtime/sessions/session_store.hpp"
#include "support/overloaded.hpp"

namespace runtime::sessions {

namespace json = boost::json;

namespace {

using support::overloaded;

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

const json::value* field(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null()) return nullptr;
  return &it->value();
}

std::string str(const json::object& o, std::string_view key, bool required = false) {
  const json::value* v = field(o, key);
  if (!v) {
    if (required) bad("missing \"" + std::string(key) + "\"");
    return {};
  }
  if (!v->is_string()) bad("\"" + std::string(key) + "\" is not a string");
  return std::string(v->get_string());
}

std::optional<std::string> opt_str(const json::object& o, std::string_view key) {
  if (!field(o, key)) return std::nullopt;
  return str(o, key);
}

std::optional<json::array> opt_arr(const json::object& o, std::string_view key) {
  const json::value* v = field(o, key);
  if (!v) return std::nullopt;
  if (!v->is_array()) bad("\"" + std::string(key) + "\" is not an array");
  return json::array(v->get_array(), json::storage_ptr());  // own storage: the parse's may be temporary
}

std::int64_t num(const json::object& o, std::string_view key) {
  const json::value* v = field(o, key);
  if (!v) return 0;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
  if (v->is_double()) return static_cast<std::int64_t>(v->get_double());
  bad("\"" + std::string(key) + "\" is not a number");
}

double real(const json::object& o, std::string_view key) {
  const json::value* v = field(o, key);
  if (!v || !v->is_number()) bad("\"" + std::string(key) + "\" is not a number");
  return v->to_number<double>();
}

const json::object& obj(const json::object& o, std::string_view key) {
  const json::value* v = field(o, key);
  if (!v || !v->is_object()) bad("\"" + std::string(key) + "\" is not an object");
  return v->get_object();
}

const char* role_name(Message::Role r) {
  switch (r) {
    case Message::Role::User: return "user";
    case Message::Role::Assistant: return "assistant";
    case Message::Role::Tool: return "tool";
  }
  return "user";
}

Message expect_role(Message m, Message::Role role) {
  if (m.role != role) bad(std::string("message role is not ") + role_name(role));
  return m;
}


// ---- Tool calls as the journal keeps them ----
// Content: {"type":"content","content":<block>} | {"type":"diff","path","oldText","newText"} |
// {"type":"terminal","terminalId"}. Locations: [{"path","line"?}].

json::value content_json(const ToolContent& c) {
  return std::visit(
      overloaded{
          [](const TextContent& t) -> json::value {
            return json::object{{"type", "content"}, {"content", json::object{{"type", "text"}, {"text", t.text}}}};
          },
          [](const BlockContent& b) -> json::value { return json::object{{"type", "content"}, {"content", b.block}}; },
          [](const DiffContent& d) -> json::value {
            json::object o{{"type", "diff"}, {"path", d.path}, {"newText", d.new_text}};
            o["oldText"] = d.old_text ? json::value(*d.old_text) : json::value(nullptr);
            return o;
          },
          [](const TerminalContent& t) -> json::value {
            return json::object{{"type", "terminal"}, {"terminalId", t.terminal_id}};
          },
      },
      c);
}

ToolContent content_from(const json::value& v) {
  if (!v.is_object()) bad("tool call content is not an object");
  const auto& o = v.get_object();
  const std::string type = str(o, "type", true);
  if (type == "diff") return DiffContent{str(o, "path", true), opt_str(o, "oldText"), str(o, "newText")};
  if (type == "terminal") return TerminalContent{str(o, "terminalId", true)};
  if (type != "content") bad("unknown tool call content \"" + type + "\"");
  json::object block(obj(o, "content"), json::storage_ptr());
  if (auto* t = block.if_contains("type"); t && *t == "text") return TextContent{str(block, "text")};
  return BlockContent{std::move(block)};
}

// Sets o[key] to encode(*value) when the value is set.
template <class T, class Encode>
void put(json::object& o, const char* key, const std::optional<T>& value, Encode encode) {
  if (value) o[key] = encode(*value);
}

template <class T, class Encode>
json::array each(const std::vector<T>& items, Encode encode) {
  json::array a;
  for (const auto& item : items) a.push_back(encode(item));
  return a;
}

json::value location_json(const ToolLocation& l) {
  json::object loc{{"path", l.path}};
  if (l.line) loc["line"] = *l.line;
  return loc;
}

void fields_to_json(const ToolCallFields& f, json::object& o) {
  auto as_is = [](const auto& v) { return json::value(v); };
  put(o, "title", f.title, as_is);
  put(o, "name", f.name, as_is);
  put(o, "kind", f.kind, [](ToolKind k) { return json::value(tool_kind_name(k)); });
  put(o, "status", f.status, [](ToolStatus st) { return json::value(tool_status_name(st)); });
  put(o, "locations", f.locations, [](const auto& v) { return json::value(each(v, location_json)); });
  put(o, "rawInput", f.raw_input, as_is);
  put(o, "rawOutput", f.raw_output, as_is);
  put(o, "content", f.content, [](const auto& v) { return json::value(each(v, content_json)); });
}

ToolCallFields fields_from_json(const json::object& o) {
  ToolCallFields f;
  f.title = opt_str(o, "title");
  f.name = opt_str(o, "name");
  if (auto k = opt_str(o, "kind")) f.kind = tool_kind_from_name(*k).value_or(ToolKind::Other);
  if (auto st = opt_str(o, "status")) {
    f.status = tool_status_from_name(*st);
    if (!f.status) bad("unknown tool call status \"" + *st + "\"");
  }
  if (auto locs = opt_arr(o, "locations")) {
    f.locations.emplace();
    for (const auto& v : *locs) {
      if (!v.is_object()) bad("location is not an object");
      ToolLocation loc{str(v.get_object(), "path", true), std::nullopt};
      if (field(v.get_object(), "line")) loc.line = num(v.get_object(), "line");
      f.locations->push_back(std::move(loc));
    }
  }
  if (const json::value* v = field(o, "rawInput")) f.raw_input = json::value(*v, json::storage_ptr());
  if (const json::value* v = field(o, "rawOutput")) f.raw_output = json::value(*v, json::storage_ptr());
  if (auto content = opt_arr(o, "content")) {
    f.content.emplace();
    for (const auto& c : *content) f.content->push_back(content_from(c));
  }
  return f;
}

json::array plan_json(const std::vector<PlanEntry>& entries) {
  json::array a;
  for (const auto& e : entries) a.push_back(json::object{{"content", e.content}, {"status", e.status}});
  return a;
}

std::vector<PlanEntry> plan_from(const json::array& a) {
  std::vector<PlanEntry> out;
  for (const auto& v : a) {
    if (!v.is_object()) bad("plan entry is not an object");
    out.push_back({str(v.get_object(), "content", true), str(v.get_object(), "status", true)});
  }
  return out;
}

// ---- Sub-agent sessions: {"sessionId", "title"?, "description"?, "cwd"?, "toolCallId"?,
// "cancellable"?, "state"?: "running" | "idle" | "unknown", "stopReason"?, "error"?} ----

constexpr std::pair<SubagentChanged::State, const char*> kSubagentStates[] = {
    {SubagentChanged::State::Running, "running"},
    {SubagentChanged::State::Idle, "idle"},
    {SubagentChanged::State::Unknown, "unknown"}};

void subagent_to_json(const SubagentChanged& c, json::object& o) {
  o["sessionId"] = c.session_id;
  const std::pair<const char*, const std::optional<std::string>*> texts[] = {
      {"title", &c.title}, {"description", &c.description}, {"cwd", &c.cwd}, {"toolCallId", &c.tool_call_id}};
  for (auto [key, v] : texts)
    if (*v) o[key] = **v;
  if (c.cancellable) o["cancellable"] = true;
  for (auto [state, name] : kSubagentStates)
    if (c.state == state) o["state"] = name;
  if (!c.stop_reason.empty()) o["stopReason"] = c.stop_reason;
  if (!c.error.empty()) o["error"] = c.error;
}

SubagentChanged subagent_from_json(const json::object& o) {
  SubagentChanged c;
  c.session_id = str(o, "sessionId", true);
  c.title = opt_str(o, "title");
  c.description = opt_str(o, "description");
  c.cwd = opt_str(o, "cwd");
  c.tool_call_id = opt_str(o, "toolCallId");
  if (const json::value* v = field(o, "cancellable")) c.cancellable = v->is_bool() && v->get_bool();
  if (auto state = opt_str(o, "state")) {
    for (auto [s, name] : kSubagentStates)
      if (*state == name) c.state = s;
    if (c.state == SubagentChanged::State::Unchanged) bad("unknown sub-agent state \"" + *state + "\"");
  }
  c.stop_reason = str(o, "stopReason");
  c.error = str(o, "error");
  return c;
}

}  // namespace

json::object message_to_json(const Message& m) {
  json::object o;
  o["role"] = role_name(m.role);
  if (!m.id.empty()) o["id"] = m.id;
  if (!m.text.empty()) o["text"] = m.text;
  if (!m.images.empty()) {
    json::array a;
    for (const auto& img : m.images) a.push_back(json::object{{"mimeType", img.mime_type}, {"data", img.data_base64}});
    o["images"] = std::move(a);
  }
  if (!m.reasoning.empty()) o["reasoning"] = m.reasoning;
  if (!m.tool_calls.empty()) {
    json::array a;
    for (const auto& tc : m.tool_calls)
      a.push_back(json::object{{"id", tc.id}, {"name", tc.name}, {"arguments", tc.arguments}});
    o["toolCalls"] = std::move(a);
  }
  if (!m.tool_call_id.empty()) o["toolCallId"] = m.tool_call_id;
  if (m.is_error) o["isError"] = true;
  return o;
}

Message message_from_json(const json::object& o) {
  Message m;
  const std::string role = str(o, "role", true);
  if (role == "user") m.role = Message::Role::User;
  else if (role == "assistant") m.role = Message::Role::Assistant;
  else if (role == "tool") m.role = Message::Role::Tool;
  else bad("unknown role \"" + role + "\"");
  m.id = str(o, "id");
  m.text = str(o, "text");
  if (auto imgs = opt_arr(o, "images")) {
    for (const auto& v : *imgs) {
      if (!v.is_object()) bad("image is not an object");
      m.images.push_back({str(v.get_object(), "mimeType", true), str(v.get_object(), "data", true)});
    }
  }
  m.reasoning = str(o, "reasoning");
  if (auto tcs = opt_arr(o, "toolCalls")) {
    for (const auto& v : *tcs) {
      if (!v.is_object()) bad("tool call is not an object");
      const auto& t = v.get_object();
      m.tool_calls.push_back({str(t, "id", true), str(t, "name", true), str(t, "arguments")});
    }
  }
  m.tool_call_id = str(o, "toolCallId");
  if (const json::value* e = field(o, "isError")) {
    if (!e->is_bool()) bad("\"isError\" is not a boolean");
    m.is_error = e->get_bool();
  }
  return m;
}

const char* record_type(const RecordBody& body) {
  return std::visit(overloaded{
                        [](const Header&) { return "header"; },
                        [](const UserMessage&) { return "user"; },
                        [](const AssistantMessage&) { return "assistant"; },
                        [](const ToolCallState&) { return "tool_call"; },
                        [](const ToolResult&) { return "tool_result"; },
                        [](const ModeChange&) { return "mode"; },
                        [](const AgentChange&) { return "agent"; },
                        [](const ModelChange&) { return "model"; },
                        [](const ThoughtLevelChange&) { return "thought_level"; },
                        [](const TitleChange&) { return "title"; },
                        [](const UsageRecord&) { return "usage"; },
                        [](const Compaction&) { return "compaction"; },
                        [](const TurnEnd&) { return "turn_end"; },
                        [](const PlanUpdate&) { return "plan"; },
                        [](const SubagentRecord&) { return "subagent"; },
                        [](const ExecutorChange&) { return "executor"; },
                        [](const ArchiveChange&) { return "archive"; },
                        [](const SubagentMessage&) { return "subagent_message"; },
                        [](const PermissionMemory&) { return "permission"; },
                        [](const Rewind&) { return "rewind"; },
                    },
                    body);
}

namespace {
void permission_to_json(const PermissionMemory& m, json::object& o) {
  if (m.key.empty()) return;  // every answer forgotten
  o["key"] = m.key;
  o["allowed"] = m.allowed;
}
}  // namespace

json::object to_json(const Record& r) {
  json::object o;
  o["type"] = record_type(r.body);
  o["t"] = r.time;
  std::visit(overloaded{
                 [&](const Header& h) {
                   o["v"] = 1;
                   o["id"] = h.id;
                   o["cwd"] = h.cwd;
                   o["agent"] = h.agent;
                   o["mode"] = h.mode;
                   if (!h.parent.empty()) o["parent"] = h.parent;
                 },
                 [&](const UserMessage& u) {
                   o["message"] = message_to_json(u.message);
                   if (!u.prompt.empty()) o["prompt"] = u.prompt;
                 },
                 [&](const AssistantMessage& a) { o["message"] = message_to_json(a.message); },
                 [&](const ToolCallState& t) {
                   o["toolCallId"] = t.tool_call_id;
                   fields_to_json(t.fields, o);
                 },
                 [&](const ToolResult& t) { o["message"] = message_to_json(t.message); },
                 [&](const ModeChange& m) { o["mode"] = m.mode; },
                 [&](const AgentChange& a) { o["agent"] = a.agent; },
                 [&](const ModelChange& m) { o["model"] = m.model; },
                 [&](const ThoughtLevelChange& t) { o["reasoningEffort"] = t.reasoning_effort; },
                 [&](const ExecutorChange& x) { o["executor"] = x.executor; },
                 [&](const TitleChange& t) { o["title"] = t.title; },
                 [&](const ArchiveChange& a) { o["archived"] = a.archived; },
                 [&](const PermissionMemory& m) { permission_to_json(m, o); },
                 [&](const UsageRecord& u) {
                   o["inputTokens"] = u.usage.input_tokens;
                   o["outputTokens"] = u.usage.output_tokens;
                   if (u.usage.cached_input_tokens) o["cachedInputTokens"] = u.usage.cached_input_tokens;
                   if (u.cost) o["cost"] = json::object{{"amount", u.cost->amount}, {"currency", u.cost->currency}};
                 },
                 [&](const Compaction& c) {
                   o["summary"] = c.summary;
                   if (!c.replacement.empty()) {
                     json::array a;
                     for (const auto& m : c.replacement) a.push_back(message_to_json(m));
                     o["replacement"] = std::move(a);
                   }
                   o["kept"] = c.kept;
                   if (!c.id.empty()) o["id"] = c.id;
                 },
                 [&](const TurnEnd& t) { o["stopReason"] = t.stop_reason; },
                 [&](const PlanUpdate& p) { o["entries"] = plan_json(p.entries); },
                 [&](const SubagentRecord& r) { subagent_to_json(r.change, o); },
                 [&](const SubagentMessage& m) {
                   o["agentId"] = m.agent_id;
                   o["message"] = message_to_json(m.message);
                 },
                 [&](const Rewind& w) { o["messageId"] = w.message_id; },
             },
             r.body);
  return o;
}

namespace {

UserMessage user_from_json(const json::object& o) {
  UserMessage u{expect_role(message_from_json(obj(o, "message")), Message::Role::User), {}};
  if (auto p = opt_arr(o, "prompt")) u.prompt = std::move(*p);
  return u;
}

PermissionMemory permission_from_json(const json::object& o) {
  PermissionMemory m{str(o, "key"), false};
  if (m.key.empty()) return m;
  const json::value* a = o.if_contains("allowed");
  if (!a || !a->is_bool()) throw std::invalid_argument("permission record without a boolean 'allowed'");
  m.allowed = a->get_bool();
  return m;
}

ArchiveChange archive_from_json(const json::object& o) {
  const json::value* a = o.if_contains("archived");
  if (!a || !a->is_bool()) throw std::invalid_argument("archive record without a boolean 'archived'");
  return ArchiveChange{a->get_bool()};
}

UsageRecord usage_from_json(const json::object& o) {
  UsageRecord u{Usage{num(o, "inputTokens"), num(o, "outputTokens"), num(o, "cachedInputTokens")}, std::nullopt};
  if (field(o, "cost")) {
    const auto& c = obj(o, "cost");
    u.cost = Cost{real(c, "amount"), str(c, "currency", true)};
  }
  return u;
}

Compaction compaction_from_json(const json::object& o) {
  Compaction c;
  c.summary = str(o, "summary");
  if (auto a = opt_arr(o, "replacement")) {
    for (const auto& v : *a) {
      if (!v.is_object()) bad("replacement message is not an object");
      c.replacement.push_back(message_from_json(v.get_object()));
    }
  }
  const std::int64_t kept = num(o, "kept");
  if (kept < 0) bad("\"kept\" is negative");
  c.kept = static_cast<std::uint32_t>(kept);
  c.id = str(o, "id");
  return c;
}

PlanUpdate plan_update_from_json(const json::object& o) {
  auto entries = opt_arr(o, "entries");
  if (!entries) bad("plan record without \"entries\"");
  return PlanUpdate{plan_from(*entries)};
}

}  // namespace

Record record_from_json(const json::object& o) {
  Record r;
  const std::string type = str(o, "type", true);
  r.time = str(o, "t");
  if (type == "header") {
    r.body = Header{str(o, "id", true), str(o, "cwd", true), str(o, "agent"), str(o, "mode"), str(o, "parent")};
  } else if (type == "user") {
    r.body = user_from_json(o);
  } else if (type == "assistant") {
    r.body = AssistantMessage{expect_role(message_from_json(obj(o, "message")), Message::Role::Assistant)};
  } else if (type == "tool_call") {
    r.body = ToolCallState{str(o, "toolCallId", true), fields_from_json(o)};
  } else if (type == "tool_result") {
    r.body = ToolResult{expect_role(message_from_json(obj(o, "message")), Message::Role::Tool)};
  } else if (type == "mode") {
    r.body = ModeChange{str(o, "mode", true)};
  } else if (type == "agent") {
    r.body = AgentChange{str(o, "agent", true)};
  } else if (type == "model") {
    r.body = ModelChange{str(o, "model", true)};
  } else if (type == "executor") {
    r.body = ExecutorChange{str(o, "executor", true)};
  } else if (type == "thought_level") {
    r.body = ThoughtLevelChange{str(o, "reasoningEffort")};
  } else if (type == "title") {
    r.body = TitleChange{str(o, "title", true)};
  } else if (type == "archive") {
    r.body = archive_from_json(o);
  } else if (type == "permission") {
    r.body = permission_from_json(o);
  } else if (type == "usage") {
    r.body = usage_from_json(o);
  } else if (type == "compaction") {
    r.body = compaction_from_json(o);
  } else if (type == "turn_end") {
    r.body = TurnEnd{str(o, "stopReason")};
  } else if (type == "plan") {
    r.body = plan_update_from_json(o);
  } else if (type == "subagent") {
    r.body = SubagentRecord{subagent_from_json(o)};
  } else if (type == "subagent_message") {
    r.body = SubagentMessage{str(o, "agentId"), expect_role(message_from_json(obj(o, "message")), Message::Role::Assistant)};
  } else if (type == "rewind") {
    r.body = Rewind{str(o, "messageId", true)};
  } else {
    bad("unknown record type \"" + type + "\"");
  }
  return r;
}

}  // namespace runtime::sessions
