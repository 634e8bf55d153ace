// The editor's replay of a loaded session, read back from the log a batch at a time: `load`
// (session_load.cpp) kept where each shown record's line is; here those lines are read again in
// order, parsed and turned into the events session/load sends.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "runtime/sessions/detail.hpp"

namespace runtime::sessions {

namespace json = boost::json;
using detail::LineRef;
using detail::ReplayStep;

namespace {

constexpr std::size_t kWindowBytes = 256 * 1024;

// The messageId the editor saw live; a journal from before message ids gets one from its line,
// the same on every load.
std::string message_id(const Message& m, std::uint32_t line_no) {
  return m.id.empty() ? "msg_line" + std::to_string(line_no) : m.id;
}

// Reads [offset, offset + length) of `fd` into `out`; false when the file is shorter now or
// cannot be read.
bool read_at(int fd, std::uint64_t offset, std::size_t length, std::string& out) {
  out.resize(length);
  std::size_t got = 0;
  while (got < length) {
    const ssize_t n = ::pread(fd, out.data() + got, length - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return got == length;
}

}  // namespace

struct Replay::Impl {
  std::string id;
  int fd = -1;
  std::uint64_t size = 0;  // what load read: the replay never reads past it
  std::vector<ReplayStep> steps;
  std::vector<std::string> unknown_children;
  std::size_t next_step = 0;
  bool children_sent = false;
  // A window of the log, read ahead sequentially: the steps' lines come in file order.
  std::string window;
  std::uint64_t window_offset = 0;
  std::string spare;  // a later tool call state outside the window
  detail::LineParser parser;

  // The step's line, or nullopt (with a warning) when it cannot be read back.
  std::optional<std::string_view> line(const LineRef& ref, bool sequential) {
    if (ref.offset >= window_offset && ref.offset + ref.length <= window_offset + window.size())
      return std::string_view(window).substr(static_cast<std::size_t>(ref.offset - window_offset), ref.length);
    bool ok = ref.offset + ref.length <= size;
    if (ok && sequential) {  // the window moves on to this line and what follows it
      const std::size_t want = static_cast<std::size_t>(
          std::min<std::uint64_t>(std::max<std::uint64_t>(kWindowBytes, ref.length), size - ref.offset));
      window_offset = ref.offset;
      ok = read_at(fd, ref.offset, want, window) || window.size() >= ref.length;
      if (ok) return std::string_view(window).substr(0, ref.length);
    } else if (ok) {
      ok = read_at(fd, ref.offset, ref.length, spare);
      if (ok) return std::string_view(spare);
    }
    spdlog::warn("session {}: line {} of the log can no longer be read; not replayed", id, ref.line_no);
    return std::nullopt;
  }

  std::optional<Record> record(const LineRef& ref, bool sequential) {
    auto text = line(ref, sequential);
    if (!text) return std::nullopt;
    try {
      return parser.parse(*text);
    } catch (const std::invalid_argument& e) {
      spdlog::warn("session {}: line {} of the log changed since it was loaded ({}); not replayed", id, ref.line_no,
                   e.what());
      return std::nullopt;
    }
  }

  void add(const ReplayStep& step, std::vector<SessionEvent>& out) {
    auto rec = record(step.line, true);
    switch (step.kind) {
      case ReplayStep::Kind::User: {
        auto* u = rec ? std::get_if<UserMessage>(&rec->body) : nullptr;
        if (!u) return;
        const std::string mid = message_id(u->message, step.line.line_no);
        if (!u->prompt.empty()) {
          for (auto& b : u->prompt)
            if (b.is_object()) out.push_back(UserContent{json::object(std::move(b.get_object()), json::storage_ptr()), mid});
        } else {
          if (!u->message.text.empty())
            out.push_back(UserContent{json::object{{"type", "text"}, {"text", u->message.text}}, mid});
          for (const auto& img : u->message.images)
            out.push_back(UserContent{json::object{{"type", "image"}, {"mimeType", img.mime_type}, {"data", img.data_base64}}, mid});
        }
        return;
      }
      case ReplayStep::Kind::Assistant: {
        auto* a = rec ? std::get_if<AssistantMessage>(&rec->body) : nullptr;
        if (!a) return;
        const std::string mid = message_id(a->message, step.line.line_no);
        if (!a->message.reasoning.empty()) out.push_back(ThoughtDelta{std::move(a->message.reasoning), mid});
        if (!a->message.text.empty()) out.push_back(TextDelta{std::move(a->message.text), mid});
        return;
      }
      case ReplayStep::Kind::ToolCall: {
        // The first state that reads back, merged with the later ones: the call in its final state.
        std::optional<ToolCallBegin> call;
        auto merge = [&](std::optional<Record>& r) {
          auto* state = r ? std::get_if<ToolCallState>(&r->body) : nullptr;
          if (!state) return;
          if (call) call->fields.merge(state->fields);
          else call = ToolCallBegin{std::move(state->tool_call_id), std::move(state->fields)};
        };
        merge(rec);
        for (const auto& later : step.later) {
          auto r = record(later, false);
          merge(r);
        }
        if (!call) return;
        // No tool call is running once the session is loaded: one without a final status failed.
        const auto& st = call->fields.status;
        if (!st || (*st != ToolStatus::Completed && *st != ToolStatus::Failed)) call->fields.status = ToolStatus::Failed;
        out.push_back(std::move(*call));
        return;
      }
      case ReplayStep::Kind::Compaction: {
        auto* c = rec ? std::get_if<Compaction>(&rec->body) : nullptr;
        if (!c) return;
        CompactionProgress shown{c->id.empty() ? "compaction-" + std::to_string(step.ordinal) : c->id,
                                 CompactionStatus::Completed, std::nullopt, {}, 0};
        if (!c->summary.empty()) shown.summary = std::move(c->summary);
        out.push_back(std::move(shown));
        return;
      }
      case ReplayStep::Kind::Plan: {
        auto* p = rec ? std::get_if<PlanUpdate>(&rec->body) : nullptr;
        if (p) out.push_back(PlanShown{std::move(p->entries)});
        return;
      }
      case ReplayStep::Kind::Subagent: {
        auto* s = rec ? std::get_if<SubagentRecord>(&rec->body) : nullptr;
        if (s) out.push_back(std::move(s->change));
        return;
      }
    }
  }
};

Replay::Replay(std::string id, int fd, std::uint64_t size, std::vector<ReplayStep> steps,
               std::vector<std::string> unknown_children)
    : impl_(std::make_unique<Impl>()) {
  impl_->id = std::move(id);
  impl_->fd = fd;
  impl_->size = size;
  impl_->steps = std::move(steps);
  impl_->unknown_children = std::move(unknown_children);
}

Replay::~Replay() {
  if (impl_->fd >= 0) ::close(impl_->fd);
}

bool Replay::done() const { return impl_->next_step == impl_->steps.size() && impl_->children_sent; }

std::vector<SessionEvent> Replay::next(std::size_t max_bytes) {
  Impl& r = *impl_;
  std::vector<SessionEvent> out;
  std::size_t bytes = 0;
  // A step may show nothing (an assistant message with neither text nor reasoning): go on until
  // something is shown or the replay is over, so that an empty batch means the end.
  while (r.next_step < r.steps.size() && (bytes < max_bytes || out.empty())) {
    const ReplayStep& step = r.steps[r.next_step++];
    bytes += step.line.length;
    for (const auto& later : step.later) bytes += later.length;
    r.add(step, out);
  }
  if (r.next_step == r.steps.size()) {
    if (r.window.capacity()) std::string().swap(r.window);  // done reading
    if (!r.children_sent) {
      // A sub-agent still running when the log ends stopped with the server: its outcome is unknown.
      for (auto& child : r.unknown_children) {
        SubagentChanged ended;
        ended.session_id = std::move(child);
        ended.state = SubagentChanged::State::Unknown;
        out.push_back(std::move(ended));
      }
      r.children_sent = true;
    }
  }
  return out;
}

std::vector<SessionEvent> Replay::rest() {
  std::vector<SessionEvent> all;
  for (auto batch = next(); !batch.empty(); batch = next())
    for (auto& e : batch) all.push_back(std::move(e));
  return all;
}

namespace detail {

std::shared_ptr<Replay> make_replay(std::string id, int fd, std::uint64_t size, std::vector<ReplayStep> steps,
                                    std::vector<std::string> unknown_children) {
  return std::make_shared<Replay>(std::move(id), fd, size, std::move(steps), std::move(unknown_children));
}

}  // namespace detail

}  // namespace runtime::sessions
