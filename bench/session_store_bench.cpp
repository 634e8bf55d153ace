// The session store: what session/load and session/list cost.
//
//   session_store_bench [runs] [dir]    (default 50 runs, a fresh directory under /tmp)
//
// Cases (median and p90 wall time over `runs`):
//   load-2000   SessionStore::load of a 2,000-message session (500 turns: prompt, assistant with
//               reasoning and a tool call, the tool call's two states, a ~1.5 KB tool result,
//               the final answer, usage, turn end), i.e. read + parse + rebuild conversation and
//               replay
//   updates     load + encode_update of every replay item, read back in batches (what session/load
//               sends; the figures are warm and in one process: bench/session_load_bench.mjs
//               measures session/load as the editor sees it, in a fresh process)
//   list-500    SessionStore::list over 500 sessions, first page of 50 (sidecars current)
//   list-stale  the same with every sidecar missing (falls back to reading each log)
//   append      SessionWriter::append of a ~1.5 KB tool result (one write(2))
//   boundary    SessionWriter::turn_boundary (fsync + sidecar rename); depends on the disk
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "runtime/server/session_updates.hpp"
#include "runtime/sessions/session_store.hpp"

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace runtime;
using namespace runtime::sessions;
using Clock = std::chrono::steady_clock;

namespace {

std::string text_of(std::size_t n, int seed) {
  static const char* words[] = {"the ", "session ", "store ", "writes ", "records ", "as ", "they ", "happen; ",
                                "load ", "rebuilds ", "conversation ", "from ", "lines\n", "{\"json\": 1} "};
  std::string s;
  for (std::size_t i = 0; s.size() < n; ++i) s += words[(i * 7 + static_cast<std::size_t>(seed)) % 14];
  s.resize(n);
  return s;
}

void write_session(SessionStore& store, const std::string& id, const std::string& cwd, int turns) {
  SessionWriter w = store.create(Header{id, cwd, "build", "default"});
  for (int t = 0; t < turns; ++t) {
    Message u;
    u.role = Message::Role::User;
    u.text = text_of(200, t);
    w.append(UserMessage{u, {}});
    const std::string call = "call_" + std::to_string(t);
    Message a;
    a.role = Message::Role::Assistant;
    a.reasoning = text_of(300, t + 1);
    a.text = text_of(200, t + 2);
    a.tool_calls.push_back({call, "read_file", R"({"path":"src/module/file.cpp","offset":120,"limit":200})"});
    w.append(AssistantMessage{a});
    ToolCallState pending;
    pending.tool_call_id = call;
    pending.fields.title = "Read src/module/file.cpp";
    pending.fields.name = "read_file";
    pending.fields.kind = ToolKind::Read;
    pending.fields.status = ToolStatus::Pending;
    pending.fields.raw_input = json::object{{"path", "src/module/file.cpp"}, {"offset", 120}, {"limit", 200}};
    pending.fields.locations = std::vector<ToolLocation>{{cwd + "/src/module/file.cpp", 120}};
    w.append(pending);
    const std::string result = text_of(1500, t + 3);
    ToolCallState done;  // as ToolRouter::finish journals it: the content and the raw output
    done.tool_call_id = call;
    done.fields.title = "Read src/module/file.cpp";
    done.fields.status = ToolStatus::Completed;
    done.fields.content = std::vector<ToolContent>{TextContent{result}};
    done.fields.raw_output = json::object{{"output", result}};
    w.append(done);
    Message r;
    r.role = Message::Role::Tool;
    r.tool_call_id = call;
    r.text = result;
    w.append(ToolResult{r});
    Message f;
    f.role = Message::Role::Assistant;
    f.text = text_of(600, t + 4);
    w.append(AssistantMessage{f});
    w.append(UsageRecord{{12000 + t * 50, 400}});
    w.append(TurnEnd{"end_turn"});
  }
  w.turn_boundary();
}

struct Stats {
  double median_us, p90_us;
};

Stats measure(int runs, const std::function<void()>& fn) {
  fn();  // warm up (page cache, allocator)
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    fn();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[std::min(us.size() - 1, us.size() * 9 / 10)]};
}

void report(const char* name, Stats s) { std::printf("%-12s median %9.1f us   p90 %9.1f us\n", name, s.median_us, s.p90_us); }

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;
  fs::path base;
  if (argc > 2) {
    base = fs::path(argv[2]) / ("ov-sessions-bench-" + std::to_string(::getpid()));
    fs::create_directories(base);
  } else {
    char tmpl[] = "/tmp/openvaala-sessions-bench-XXXXXX";
    base = ::mkdtemp(tmpl);
  }
  SessionStore store(base / "sessions");

  write_session(store, "ses_big", "/work/project", 500);
  const auto size = fs::file_size(store.file_of("ses_big"));
  auto loaded = store.load("ses_big");
  std::printf("session: %zu messages, %zu replay items, %zu records, %.2f MB\n", loaded->conversation.size(),
              loaded->replay->rest().size(), loaded->records, static_cast<double>(size) / 1e6);

  report("load-2000", measure(runs, [&] {
           auto s = store.load("ses_big");
           if (!s || s->conversation.size() != 2000) std::abort();
         }));
  report("updates", measure(runs, [&] {
           auto s = store.load("ses_big");
           std::size_t bytes = 0;
           for (auto batch = s->replay->next(); !batch.empty(); batch = s->replay->next())
             for (const auto& item : batch) bytes += json::serialize(*runtime::server::encode_update(item, {})).size();
           if (bytes == 0) std::abort();
         }));

  SessionStore many(base / "many");
  for (int i = 0; i < 500; ++i) write_session(many, "ses_" + std::to_string(i), i % 4 ? "/p/a" : "/p/b", 2);
  report("list-500", measure(runs, [&] {
           if (many.list(std::nullopt, std::nullopt, 50).sessions.size() != 50) std::abort();
         }));
  for (int i = 0; i < 500; ++i) fs::remove(many.meta_of("ses_" + std::to_string(i)));
  report("list-stale", measure(runs, [&] {
           if (many.list(std::nullopt, std::nullopt, 50).sessions.size() != 50) std::abort();
         }));

  SessionWriter w = store.open("ses_big");
  Message r;
  r.role = Message::Role::Tool;
  r.tool_call_id = "x";
  r.text = text_of(1500, 9);
  report("append", measure(runs * 10, [&] { w.append(ToolResult{r}); }));
  report("boundary", measure(runs, [&] { w.turn_boundary(); }));

  std::error_code ec;
  fs::remove_all(base, ec);
  return 0;
}
