#include "runtime/server/session_updates.hpp"

#include <charconv>
#include <cmath>

#include "support/overloaded.hpp"
#include "support/random_id.hpp"

namespace runtime::server {

namespace json = boost::json;

double shown_cost(double amount) {
  if (!std::isfinite(amount) || amount == 0) return amount;
  // Through text: to_chars/from_chars round exactly and do not depend on the locale.
  char buf[32];
  auto written = std::to_chars(buf, buf + sizeof buf, amount, std::chars_format::general, 6);
  double out = amount;
  std::from_chars(buf, written.ptr, out);
  return out;
}

namespace {

using support::overloaded;

json::object text_block(const std::string& text) { return json::object{{"type", "text"}, {"text", text}}; }

// ACP ToolCallContent.
json::object tool_call_content(const ToolContent& content) {
  struct Encode {
    json::object operator()(const TextContent& t) const { return {{"type", "content"}, {"content", text_block(t.text)}}; }
    json::object operator()(const BlockContent& b) const { return {{"type", "content"}, {"content", b.block}}; }
    json::object operator()(const TerminalContent& t) const { return {{"type", "terminal"}, {"terminalId", t.terminal_id}}; }
    json::object operator()(const DiffContent& d) const {
      return {{"type", "diff"},
              {"path", d.path},
              {"oldText", d.old_text ? json::value(*d.old_text) : json::value(nullptr)},
              {"newText", d.new_text}};
    }
  };
  return std::visit(Encode{}, content);
}

json::object with_kind(const char* kind, json::object fields) {
  fields["sessionUpdate"] = kind;
  return fields;
}

json::object chunk(const char* kind, json::object content, const std::string& message_id) {
  json::object o{{"sessionUpdate", kind}, {"content", std::move(content)}};
  if (!message_id.empty()) o["messageId"] = message_id;
  return o;
}

// For a client without a notice view: a quoted paragraph of the agent's message (one "> " per line).
// A message of its own (`message_id`, else a fresh id), so the answer around it stays one message.
json::object quoted(const std::string& title, const std::string& description, const std::string& message_id) {
  std::string text = "\n\n> " + title;
  if (!description.empty()) text += ": " + description;
  for (auto at = text.find('\n', 3); at != std::string::npos; at = text.find('\n', at + 3)) text.insert(at + 1, "> ");
  return chunk("agent_message_chunk", text_block(text + "\n\n"), message_id.empty() ? support::random_id("msg_") : message_id);
}

json::object notice(const Notice& n, bool client_shows_notices) {
  // The schema wants a non-empty title; every emit site gives one, this is the last guard.
  const std::string title = !n.title.empty() ? n.title : !n.description.empty() ? n.description : "Notice";
  const std::string description = n.title.empty() ? std::string() : n.description;
  if (!client_shows_notices) return quoted(title, description, n.message_id);
  json::object o{{"sessionUpdate", "notice"}, {"severity", notice_severity_name(n.severity)}, {"title", title}};
  if (!description.empty()) o["description"] = description;
  return o;
}

// Today's chat text for a client without a compaction view, live and replayed.
json::object compaction_as_text(const CompactionProgress& c) {
  const std::string id = "msg_" + c.id + "_" + compaction_status_name(c.status);  // the same on replay
  switch (c.status) {
    case CompactionStatus::InProgress:
      return quoted("Compacting the conversation: the model is summarising it to free context.", "", id);
    case CompactionStatus::Completed:
      if (c.messages == 0) return quoted("The earlier conversation was summarised to fit the context window.", "", id);
      return quoted("Compacted " + std::to_string(c.messages) + " messages into a summary.", "", id);
    case CompactionStatus::Failed: return quoted("Compaction failed, the conversation is unchanged", c.error, id);
    case CompactionStatus::Cancelled: return quoted("Compaction cancelled, the conversation is unchanged.", "", id);
  }
  return quoted("Compaction", "", id);
}

json::object compaction_update(const CompactionProgress& c) {
  json::object o{{"sessionUpdate", "compaction_update"}, {"compactionId", c.id}, {"status", compaction_status_name(c.status)}};
  if (c.summary) o["summary"] = json::array{text_block(*c.summary)};
  if (!c.error.empty()) o["error"] = c.error;
  return o;
}

json::array commands_json(const std::vector<AvailableCommand>& commands) {
  json::array out;
  for (const auto& c : commands) {
    json::object o{{"name", c.name}, {"description", c.description}};
    if (!c.input_hint.empty()) o["input"] = json::object{{"hint", c.input_hint}};
    out.push_back(std::move(o));
  }
  return out;
}

json::array plan_json(const std::vector<PlanEntry>& entries) {
  json::array out;
  for (const auto& e : entries) out.push_back(json::object{{"content", e.content}, {"priority", "medium"}, {"status", e.status}});
  return out;
}

// ACP SubagentUpdate (unstable): a patch of the child's association, sent on the parent.
json::object subagent_update(const SubagentChanged& c) {
  using State = SubagentChanged::State;
  json::object o{{"sessionUpdate", "subagent_update"}, {"sessionId", c.session_id}};
  if (c.title) o["title"] = *c.title;
  if (c.description) o["description"] = *c.description;
  if (c.cwd) o["cwd"] = *c.cwd;
  if (c.cancellable) o["capabilities"] = json::object{{"cancel", json::object{}}};
  if (c.state == State::Running) o["state"] = json::object{{"state", "running"}};
  if (c.state == State::Unknown) o["state"] = json::object{{"state", "unknown"}};
  if (c.state == State::Idle) {
    json::object idle{{"state", "idle"}, {"stopReason", c.stop_reason}};
    if (c.stop_reason == "error") idle["error"] = json::object{{"code", -32603}, {"message", c.error}};
    o["state"] = std::move(idle);
  }
  // The schema has no field for the tool call that started the child; clients bind it from here.
  if (c.tool_call_id) o["_meta"] = json::object{{"openvaala", json::object{{"toolCallId", *c.tool_call_id}}}};
  return o;
}

}  // namespace

json::object encode_tool_call(const std::string& id, const ToolCallFields& f) {
  json::object o{{"toolCallId", id}};
  if (f.title) o["title"] = *f.title;
  if (f.name) o["name"] = *f.name;
  if (f.kind) o["kind"] = tool_kind_name(*f.kind);
  if (f.status) o["status"] = tool_status_name(*f.status);
  if (f.locations) {
    json::array locations;
    for (const auto& l : *f.locations) {
      json::object loc{{"path", l.path}};
      if (l.line) loc["line"] = *l.line;
      locations.push_back(std::move(loc));
    }
    o["locations"] = std::move(locations);
  }
  if (f.raw_input) o["rawInput"] = *f.raw_input;
  if (f.raw_output) o["rawOutput"] = *f.raw_output;
  if (f.content) {
    json::array content;
    for (const auto& c : *f.content) content.push_back(tool_call_content(c));
    o["content"] = std::move(content);
  }
  return o;
}

void append_journal_update(std::string& out, const JournalChunk& c) {
  using Kind = JournalChunk::Kind;
  // chunk()'s members, in its order.
  out += c.kind == Kind::User    ? R"({"sessionUpdate":"user_message_chunk","content":)"
         : c.kind == Kind::Agent ? R"({"sessionUpdate":"agent_message_chunk","content":)"
                                 : R"({"sessionUpdate":"agent_thought_chunk","content":)";
  if (c.kind == Kind::User) {
    out += c.json;
  } else {
    out += R"({"type":"text","text":)";  // text_block()
    out += c.json;
    out += '}';
  }
  out += R"(,"messageId":)";
  out += c.message_id;
  out += '}';
}

void append_journal_update(std::string& out, const JournalToolCall& c) {
  // encode_tool_call()'s members in its order, then with_kind()'s, then the title a new call needs.
  out += R"({"toolCallId":)";
  out += json::serialize(json::string_view(c.id));
  for (std::size_t i = 0; i < c.json.size(); ++i) {
    if (c.json[i].empty()) continue;
    out += ",\"";
    out += JournalToolCall::kFields[i];
    out += "\":";
    out += c.json[i];
  }
  out += c.update ? R"(,"sessionUpdate":"tool_call_update")" : R"(,"sessionUpdate":"tool_call")";
  if (!c.update && c.json[JournalToolCall::kTitle].empty()) out += R"(,"title":"")";
  out += '}';
}

std::size_t journal_update_size(const JournalChunk& c) { return c.json.size() + c.message_id.size() + 96; }

std::size_t journal_update_size(const JournalToolCall& c) {
  std::size_t n = c.id.size() + 96;
  for (const auto& field : c.json) n += field.size() + 16;
  return n;
}

namespace {
template <class Journal>
json::object parsed_journal_update(const Journal& event) {
  std::string text;
  append_journal_update(text, event);
  return json::parse(text).as_object();
}
}  // namespace

json::object config_option_update(const std::vector<acp::schema::SessionConfigOption>& options) {
  return json::object{{"sessionUpdate", "config_option_update"}, {"configOptions", json::value_from(options)}};
}

std::optional<json::object> encode_update(const SessionEvent& event, const acp::ClientCapabilities& client) {
  return std::visit(
      overloaded{
          [](const UserContent& u) -> std::optional<json::object> {
            return chunk("user_message_chunk", u.block, u.message_id);
          },
          [](const TextDelta& t) -> std::optional<json::object> {
            return chunk("agent_message_chunk", text_block(t.text), t.message_id);
          },
          [](const ThoughtDelta& t) -> std::optional<json::object> {
            return chunk("agent_thought_chunk", text_block(t.text), t.message_id);
          },
          [&](const Notice& n) -> std::optional<json::object> { return notice(n, client.notices); },
          [&](const CompactionProgress& c) -> std::optional<json::object> {
            return client.compaction ? compaction_update(c) : compaction_as_text(c);
          },
          // Without a compaction view the summary is not shown (the model's context, not the chat's).
          [&](const CompactionSummaryDelta& d) -> std::optional<json::object> {
            if (!client.compaction) return std::nullopt;
            return json::object{{"sessionUpdate", "compaction_summary_chunk"}, {"compactionId", d.id}, {"content", text_block(d.text)}};
          },
          [](const ToolCallBegin& c) -> std::optional<json::object> {
            auto o = with_kind("tool_call", encode_tool_call(c.id, c.fields));
            if (!o.contains("title")) o["title"] = "";  // required on a new tool call
            return o;
          },
          [](const ToolCallUpdate& c) -> std::optional<json::object> {
            return with_kind("tool_call_update", encode_tool_call(c.id, c.fields));
          },
          [](const PlanShown& p) -> std::optional<json::object> {
            return json::object{{"sessionUpdate", "plan"}, {"entries", plan_json(p.entries)}};
          },
          [](const ContextUsage& u) -> std::optional<json::object> {
            json::object o{{"sessionUpdate", "usage_update"}, {"used", u.used}, {"size", u.size}};
            if (u.cost) o["cost"] = json::object{{"amount", shown_cost(u.cost->amount)}, {"currency", u.cost->currency}};
            return o;
          },
          [](const ModeChanged& m) -> std::optional<json::object> {
            return json::object{{"sessionUpdate", "current_mode_update"}, {"currentModeId", m.mode_id}};
          },
          [](const CommandsChanged& c) -> std::optional<json::object> {
            return json::object{{"sessionUpdate", "available_commands_update"}, {"availableCommands", commands_json(c.commands)}};
          },
          [](const TitleChanged& t) -> std::optional<json::object> {
            json::object o{{"sessionUpdate", "session_info_update"}, {"title", t.title}};
            if (!t.updated_at.empty()) o["updatedAt"] = t.updated_at;
            return o;
          },
          [](const SubagentChanged& c) -> std::optional<json::object> { return subagent_update(c); },
          // The editor's connection sends these as text (AcpEditorHost::emit); parsed for anyone else.
          [](const JournalChunk& c) -> std::optional<json::object> { return parsed_journal_update(c); },
          [](const JournalToolCall& c) -> std::optional<json::object> { return parsed_journal_update(c); },
      },
      event);
}

}  // namespace runtime::server
