// libFuzzer target for the whole agent behind its ACP connection: the session methods, prompts,
// the turn loop with tools, permission prompts, client answers, the MCP tunnel and shutdown.
//
// An input is a script, one step per line (see tests/fuzz/corpus/agent for examples):
//   {...}           a message from the editor, fed through the stdio message reader. `$S0`..`$S9`
//                   become the ids of the sessions opened so far, `$W` the workspace folder.
//   < KIND|{...}    answers the oldest request the agent sent us: a JSON object gives the body
//                   ({"result": ...} or {"error": ...}); a keyword picks a well-formed answer for
//                   the request's method: ok, allow, allow_always, reject, reject_always,
//                   cancelled, error.
//   m STEP          queues the next model response: `text T`, `think T`, `tool NAME ARGS`,
//                   `error N`, `hang` (until cancelled), `long N` (N chunks), `max`, `usage N`.
//   run             lets the agent work until it waits for us, giving child processes and timers
//                   up to ~2 ms (every step runs the agent until it waits, but does not wait for them).
// At the end every open request is answered and the sessions are deleted; one agent serves
// kInputsPerAgent inputs, then the editor disconnects and the agent must wind down. A turn or
// coroutine left hanging, a crash, a sanitizer report, a stray line on "stdout" (every line we
// get must be one JSON-RPC 2.0 object, in UTF-8) is a finding.
//
// The model is in-process (providers::ModelFactory), so nothing leaves the machine. Tools do run:
// `bash` commands are replaced by harmless ones, stdio MCP servers by `true`/`cat`; run the
// fuzzer as an unprivileged user (scripts/fuzz-agent.sh does) since apply_patch writes wherever
// the fuzzed patch and the permission answers let it.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "acp/connection.hpp"
#include "acp/message_reader.hpp"
#include "runtime/providers/model_provider.hpp"
#include "runtime/server/acp_agent.hpp"
#include "support/blocking_work.hpp"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using runtime::providers::ModelError;
using runtime::providers::ModelRequest;
using runtime::providers::ModelResponse;
using runtime::providers::ResolvedModel;
using runtime::providers::StreamCallbacks;

fs::path g_workspace;
bool g_trace = false;  // AGENT_FUZZ_TRACE=1: print the conversation to stderr (to read a finding)

json::value parse_or_null(std::string_view text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  return ec ? json::value() : v;
}

// ---- the editor's side -------------------------------------------------------------------

struct AgentRequest {
  json::value id;
  std::string method;
  json::value params;
};

struct FuzzEditor : acp::Transport {
  std::deque<AgentRequest> requests;  // sent to us, not answered yet
  std::vector<std::string> session_ids;

  void send(std::string line) override {
    if (g_trace) std::fprintf(stderr, "agent> %s\n", line.c_str());
    if (line.find('\n') != std::string::npos) std::abort();  // one message per line
    json::value v = parse_or_null(line);
    auto* o = v.if_object();
    if (!o) std::abort();  // every line is a JSON object
    auto* version = o->if_contains("jsonrpc");
    if (!version || !version->is_string() || version->get_string() != "2.0") std::abort();
    if (auto* m = o->if_contains("method"); m && m->is_string()) {
      if (auto* id = o->if_contains("id")) requests.push_back({*id, std::string(m->get_string()), o->contains("params") ? o->at("params") : json::value()});
      return;
    }
    if (auto* r = o->if_contains("result"); r && r->is_object())
      if (auto* sid = r->as_object().if_contains("sessionId"); sid && sid->is_string() && session_ids.size() < 10)
        session_ids.emplace_back(sid->get_string());
  }
};

// A well-formed answer of the kind `kind` to one request of the agent's.
json::object answer_for(const AgentRequest& r, std::string_view kind) {
  json::object msg{{"jsonrpc", "2.0"}, {"id", r.id}};
  if (kind == "error") {
    msg["error"] = json::object{{"code", -32603}, {"message", "the editor failed"}};
    return msg;
  }
  const std::string& m = r.method;
  if (m == "session/request_permission") {
    std::string want = kind == "ok" ? "allow_once" : std::string(kind);
    if (kind == "allow") want = "allow_once";
    if (kind == "reject") want = "reject_once";
    if (kind == "cancelled") {
      msg["result"] = json::object{{"outcome", json::object{{"outcome", "cancelled"}}}};
      return msg;
    }
    std::string option_id = "missing";
    if (auto* p = r.params.if_object())
      if (auto* opts = p->if_contains("options"); opts && opts->is_array())
        for (const auto& opt : opts->get_array())
          if (opt.is_object() && opt.as_object().contains("kind") && opt.at("kind") == json::value(want) &&
              opt.as_object().contains("optionId"))
            option_id = json::value_to<std::string>(opt.at("optionId"));
    msg["result"] = json::object{{"outcome", json::object{{"outcome", "selected"}, {"optionId", option_id}}}};
  } else if (m == "fs/read_text_file") {
    // The editor reads the file (as the unprivileged fuzzing user), so patches can apply.
    std::string path;
    if (auto* p = r.params.if_object(); p && p->contains("path") && p->at("path").is_string())
      path = std::string(p->at("path").get_string());
    // As an editor does: a folder (the agent may ask for one) or an unreadable path is an error.
    // (libstdc++ throws from a read that fails, e.g. of a folder.)
    std::string content;
    bool read = false;
    try {
      std::error_code ec;
      std::ifstream in;
      if (fs::is_regular_file(path, ec)) in.open(path);
      if (in.is_open()) {
        content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        read = true;
      }
    } catch (const std::exception&) {
    }
    if (!read) {
      msg["error"] = json::object{{"code", -32002}, {"message", "Resource not found: " + path}};
      return msg;
    }
    msg["result"] = json::object{{"content", content.substr(0, 1 << 16)}};
  } else if (m == "terminal/create") {
    msg["result"] = json::object{{"terminalId", "term-1"}};
  } else if (m == "terminal/output") {
    msg["result"] = json::object{{"output", "fuzz output\n"}, {"truncated", false}, {"exitStatus", json::object{{"exitCode", 0}}}};
  } else if (m == "terminal/wait_for_exit") {
    msg["result"] = json::object{{"exitCode", kind == "reject" ? 1 : 0}};
  } else if (m == "mcp/connect") {
    msg["result"] = json::object{{"connectionId", "conn-1"}};
  } else if (m == "mcp/message") {
    // Enough of an MCP server for both tunnel forms: the older one (connectionId) answers with the
    // inner result itself, the current one wraps it in {result}.
    const json::object* p = r.params.if_object();
    const json::value* inner_method = p ? p->if_contains("method") : nullptr;
    auto is = [&](const char* name) { return inner_method && *inner_method == json::value(name); };
    json::object inner;
    if (is("initialize")) {
      inner = {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object{{"tools", json::object{}}}},
               {"serverInfo", json::object{{"name", "editor-mcp"}, {"version", "1"}}}};
    } else if (is("tools/list")) {
      inner["tools"] = json::array{json::object{{"name", "echo"},
                                                {"description", "echoes"},
                                                {"inputSchema", json::object{{"type", "object"}}}}};
    } else if (is("tools/call")) {
      inner["content"] = json::array{json::object{{"type", "text"}, {"text", "from the editor's MCP server"}}};
      inner["isError"] = kind == "reject";
    }
    if (p && p->contains("connectionId")) msg["result"] = inner;
    else msg["result"] = json::object{{"result", inner}};
  } else {
    msg["result"] = json::object{};
  }
  return msg;
}

// ---- the model -----------------------------------------------------------------------------

// The model's answers, scripted by the input; an empty script answers "ok".
struct ModelScript {
  std::deque<std::string> steps;
};

// Commands the bash tool may really run here: the fuzzer must not run what it invents.
const char* const kSafeCommands[] = {"true", "echo fuzz", "exit 3", "printf 'a\\nb'", "echo err >&2"};

std::string sanitize_tool_arguments(const std::string& tool, std::string args) {
  if (tool != "bash") return args;
  json::value v = parse_or_null(args);
  if (auto* o = v.if_object(); o && o->contains("command")) {
    (*o)["command"] = kSafeCommands[args.size() % std::size(kSafeCommands)];
    return json::serialize(v);
  }
  return args;
}

class ScriptedModel : public runtime::providers::Model {
 public:
  ScriptedModel(ResolvedModel model, ModelScript& script) : model_(std::move(model)), script_(script) {}
  const ResolvedModel& model() const override { return model_; }

  asio::awaitable<ModelResponse> stream(const ModelRequest&, StreamCallbacks& cb, support::CancelSource* cancel) override {
    ModelResponse out;
    std::string step = "text ok";
    if (!script_.steps.empty()) {
      step = std::move(script_.steps.front());
      script_.steps.pop_front();
    }
    const auto space = step.find(' ');
    const std::string verb = step.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : step.substr(space + 1);
    const long number = std::strtol(rest.c_str(), nullptr, 10);
    if (verb == "think") {
      if (cb.on_reasoning) cb.on_reasoning(rest);
      out.reasoning = rest;
    } else if (verb == "tool") {
      const auto sp = rest.find(' ');
      runtime::ToolCall call;
      call.id = "call-" + std::to_string(++calls_);
      call.name = rest.substr(0, sp);
      call.arguments = sanitize_tool_arguments(call.name, sp == std::string::npos ? "{}" : rest.substr(sp + 1));
      out.tool_calls.push_back(std::move(call));
      out.finish = runtime::FinishReason::ToolUse;
    } else if (verb == "error") {
      throw ModelError(static_cast<ModelError::Kind>(std::labs(number) % 8), "fuzzed model failure");
    } else if (verb == "hang") {
      if (cancel && !cancel->cancelled()) {
        asio::steady_timer timer(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
        auto reg = cancel->on_cancel([&timer] { timer.cancel(); });
        co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      }
      throw ModelError(ModelError::Kind::Cancelled, "cancelled");
    } else if (verb == "long") {
      for (long i = 0; i < std::min(number, 64L); ++i) {
        if (cb.wait_for_consumer) co_await cb.wait_for_consumer();
        if (cb.on_text) cb.on_text("chunk ");
        out.text += "chunk ";
      }
    } else if (verb == "max") {
      out.text = "cut";
      out.finish = runtime::FinishReason::MaxTokens;
    } else if (verb == "refuse") {
      out.finish = runtime::FinishReason::Refusal;
    } else if (verb == "usage") {
      out.text = "big";
      out.usage.input_tokens = number;
      out.usage.output_tokens = number / 10;
    } else {
      if (cb.on_text) cb.on_text(rest);
      out.text = rest;
    }
    co_return out;
  }

 private:
  ResolvedModel model_;
  ModelScript& script_;
  int calls_ = 0;
};

// ---- one run -------------------------------------------------------------------------------

std::string substitute(std::string line, const FuzzEditor& editor) {
  for (std::size_t at = line.find('$'); at != std::string::npos && at + 1 < line.size(); at = line.find('$', at + 1)) {
    const char c = line[at + 1];
    if (c == 'W') {
      line.replace(at, 2, g_workspace.string());
    } else if (c == 'S' && at + 2 < line.size() && line[at + 2] >= '0' && line[at + 2] <= '9') {
      const std::size_t n = static_cast<std::size_t>(line[at + 2] - '0');
      line.replace(at, 3, n < editor.session_ids.size() ? editor.session_ids[n] : "no-such-session");
    }
  }
  return line;
}

// Stdio MCP servers the editor asks for are replaced by harmless commands.
std::string sanitize_editor_message(std::string line) {
  if (line.find("mcpServers") == std::string::npos) return line;
  json::value v = parse_or_null(line);
  auto* o = v.if_object();
  if (!o) return line;
  auto* params = o->if_contains("params");
  if (!params || !params->is_object()) return line;
  auto* servers = params->as_object().if_contains("mcpServers");
  if (!servers || !servers->is_array()) return line;
  for (auto& s : servers->as_array())
    if (auto* so = s.if_object(); so && so->contains("command")) {
      (*so)["command"] = so->at("command") == json::value("cat") ? "cat" : "true";
      (*so)["args"] = json::array{};
    }
  return json::serialize(v);
}

class Run {
 public:
  Run()
      : conn_(ioc_.get_executor(), editor_),
        agent_(std::make_unique<runtime::server::AcpAgent>(
            conn_, pool_, [this](ResolvedModel m) { return std::make_unique<ScriptedModel>(std::move(m), script_); },
            /*watch_skill_files=*/false)),
        reader_(sink_, 1 << 20) {
    sink_.conn = &conn_;
  }

  void step(std::string_view line) {
    if (line.empty()) return;
    if (line.substr(0, 2) == "m ") {
      if (script_.steps.size() < 64) script_.steps.emplace_back(line.substr(2));
      return;
    }
    if (line.substr(0, 2) == "< ") {
      answer_oldest(line.substr(2));
    } else if (line != "run") {
      std::string message = sanitize_editor_message(substitute(std::string(line), editor_));
      if (g_trace) std::fprintf(stderr, "editor> %s\n", message.c_str());
      message.push_back('\n');
      reader_.feed(message);
    }
    settle(line == "run");
  }

  // Between two inputs given to one agent: answer what it waits for, then cancel and delete the
  // sessions the input opened, so that the next input starts from an agent with none.
  void end_input() {
    drain_requests();
    // A copy each round: a session/new still in flight may answer (and add its id) meanwhile.
    for (int round = 0; round < 4 && !editor_.session_ids.empty(); ++round) {
      const std::vector<std::string> ids = std::exchange(editor_.session_ids, {});
      for (const auto& id : ids) {
        for (const char* method : {"session/cancel", "session/delete"}) {
          json::object msg{{"jsonrpc", "2.0"}, {"method", method}, {"params", json::object{{"sessionId", id}}}};
          if (method[8] == 'd') msg["id"] = "fuzz-harness-delete";
          conn_.handle_line(json::serialize(msg));
          settle();
          drain_requests();
        }
      }
    }
    editor_.session_ids.clear();
    script_.steps.clear();
  }

  // The editor disconnects: everything the agent started must wind down.
  void finish() {
    drain_requests();
    agent_->shutdown();
    conn_.close();
    ioc_.restart();
    ioc_.run_for(std::chrono::seconds(10));
    if (!ioc_.stopped()) std::abort();  // something still runs after the editor disconnected
    agent_.reset();
    pool_.join();
  }

 private:
  struct Sink : acp::MessageReader::Sink {
    acp::Connection* conn = nullptr;
    void on_message(acp::IncomingMessage&& m) override { conn->handle_message(std::move(m)); }
  };

  // Answers whatever the agent still waits for, a bounded number of times (a turn may ask again).
  void drain_requests() {
    for (int round = 0; round < 50 && !editor_.requests.empty(); ++round) {
      answer_oldest("cancelled");
      settle();
    }
  }

  void answer_oldest(std::string_view how) {
    if (editor_.requests.empty()) return;
    AgentRequest r = std::move(editor_.requests.front());
    editor_.requests.pop_front();
    std::string line;
    if (g_trace) std::fprintf(stderr, "(answering %s with %.*s)\n", r.method.c_str(), static_cast<int>(how.size()), how.data());
    if (!how.empty() && how.front() == '{') {
      json::value body = parse_or_null(how);
      json::object msg = body.is_object() ? body.as_object() : json::object{};
      msg["jsonrpc"] = "2.0";
      msg["id"] = r.id;
      line = json::serialize(msg);
    } else {
      line = json::serialize(answer_for(r, how));
    }
    conn_.handle_line(line);
  }

  // Runs the agent until it has nothing to do but wait: for us, for a hanging model, or for the
  // reactor (a child process, a timer). Work on the pool is waited for (it posts back within
  // microseconds, and support::blocking_work_in_flight says when it has); the reactor is not,
  // unless `patient` (the `run` step, at most ~2 ms): what a child does is picked up by a later
  // step or by finish(), in another interleaving. The fuzzer wants speed, and the agent must cope
  // with any order anyway.
  void settle(bool patient = false) {
    const auto patience_ends = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    for (int spins = 0; spins < 100000; ++spins) {
      ioc_.restart();
      if (ioc_.poll() > 0) continue;
      if (ioc_.stopped() || !editor_.requests.empty()) return;  // idle, or the next step may answer
      if (support::blocking_work_in_flight().load(std::memory_order_acquire) > 0) {
        // The pool posts its result back to ioc_, which wakes the reactor at once: block on that
        // rather than spin (a spin of poll() and sched_yield() was a quarter of the fuzzer's CPU).
        ioc_.restart();
        ioc_.run_one_for(std::chrono::milliseconds(1));
        continue;
      }
      if (!patient) return;
      const auto now = std::chrono::steady_clock::now();
      if (now >= patience_ends) return;
      // Child processes and timers wake the reactor when they have something; the reactor's wait
      // is rounded up to whole milliseconds, so a `run` step lasts 1-3 ms when nothing happens.
      ioc_.restart();
      ioc_.run_one_for(patience_ends - now);
    }
  }

  asio::io_context ioc_;
  asio::thread_pool pool_{2};
  FuzzEditor editor_;
  acp::Connection conn_;
  ModelScript script_;
  std::unique_ptr<runtime::server::AcpAgent> agent_;
  Sink sink_;
  acp::MessageReader reader_;
};

void write_file(const fs::path& p, std::string_view text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

fs::path g_scratch;  // recreated for every input: workspace, data (the journals), cache, home

// The workspace every input starts from: a file, an AGENTS.md at the top and a deeper one.
void reset_workspace() {
  std::error_code ec;
  fs::remove_all(g_workspace, ec);
  write_file(g_workspace / "AGENTS.md", "Be brief.\n");
  write_file(g_workspace / "src" / "a.txt", "alpha\nbeta\n");
  write_file(g_workspace / "src" / "AGENTS.md", "Deeper rules.\n");
}

// Everything a new agent starts from: no journals, an empty cache and home.
void reset_scratch() {
  std::error_code ec;
  fs::remove_all(g_scratch, ec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // As in the server (app/acp_server.cpp): a child that exits before reading its stdin (an MCP
  // server that is `true`) must be a write error, not the end of the process.
  std::signal(SIGPIPE, SIG_IGN);
  // A private world: config (an OpenAI-style provider the scripted model stands in for, a skill)
  // and the scratch folders. Put it on a tmpfs (scripts/fuzz-agent.sh does): every input writes.
  const char* base_env = std::getenv("OPENVAALA_FUZZ_DIR");
  // One world a process: -jobs=N runs N of them side by side.
  fs::path base = (base_env && *base_env ? fs::path(base_env) : fs::temp_directory_path() / "openvaala-agent-fuzz") /
                  std::to_string(::getpid());
  fs::create_directories(base);
  const fs::path config = base / "config";
  write_file(config / "config.yaml",
             "model: fuzz/model\nproviders:\n  fuzz:\n    api_type: openai\n    base_url: http://127.0.0.1:9/v1\n"
             "    api_key_env: FUZZ_MODEL_KEY\n");
  write_file(config / "skills" / "review" / "SKILL.md", "---\nname: review\ndescription: Reviews a change\n---\nReview it.\n");
  g_scratch = base / "scratch";
  g_workspace = g_scratch / "workspace";
  ::setenv("OPENVAALA_CONFIG_DIR", config.c_str(), 1);
  ::setenv("OPENVAALA_DATA_DIR", (g_scratch / "data").c_str(), 1);
  ::setenv("OPENVAALA_CACHE_DIR", (g_scratch / "cache").c_str(), 1);
  ::setenv("HOME", (g_scratch / "home").c_str(), 1);
  ::setenv("FUZZ_MODEL_KEY", "sk-fuzz-key-123456", 1);
  g_trace = std::getenv("AGENT_FUZZ_TRACE") != nullptr;
  spdlog::set_level(g_trace ? spdlog::level::debug : spdlog::level::off);
  return 0;
}

// One agent serves many inputs (building one costs more than most inputs: threads, the engine
// load); every kInputsPerAgent inputs it is shut down, which is fuzzed too, and a new one built.
constexpr int kInputsPerAgent = 200;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Never destroyed at exit: a Run torn down by static destruction (libFuzzer's exit, without
  // finish()) would free the agent before its io_context destroys the coroutines that use it.
  static Run* run = nullptr;
  static int inputs = 0;
  if (!run || inputs++ % kInputsPerAgent == 0) {
    if (run) run->finish();
    delete std::exchange(run, nullptr);
    reset_scratch();
    run = new Run();
  }
  reset_workspace();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  int steps = 0;
  while (!input.empty() && steps++ < 64) {
    const auto nl = input.find('\n');
    run->step(input.substr(0, nl));
    input = nl == std::string_view::npos ? std::string_view() : input.substr(nl + 1);
  }
  run->end_input();
  return 0;
}
