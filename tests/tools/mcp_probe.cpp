// mcp_probe: drives the MCP client and the per-session MCP manager without the agent loop, for
// integration tests against real servers and for the benchmark. Prints one JSON object per line
// on stdout.
//
//   mcp_probe [options] -- stdio CMD ARGS... | http URL | sse URL
//     --id ID                 server id (default "probe")
//     --tools a,b             offer only these tools (the server's names)
//     --root DIR              a session folder (roots/list); repeatable
//     --timeout-ms N          startup timeout (default 15000)
//     --tool-timeout-ms N     tools/call timeout (default 30000)
//     --call TOOL JSON        call mcp__<id>__TOOL through the Tool interface; repeatable
//     --raw-call TOOL JSON    call TOOL with the bare client (no manager); repeatable
//     --cancel-after-ms N     cancel the --call tools after N ms
//     --bench TOOL JSON N     N sequential tools/call round trips with the bare client
//     --hold-ms N             stay connected N ms before closing (orphan tests)
//     --delay-ms N            wait N ms after listing tools before the --call tools
//     --exit-on-stdin-eof     on stdin EOF kill every server group and exit 3 (orphan tests)
//   mcp_probe --acp           an ACP agent on stdio (initialize + `_probe/run {cwd, mcpServers,
//                             calls: [{tool, arguments}], cancelAfterMs?}`), for the MCP-over-ACP tests
#include <limits>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/thread_pool.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <thread>

#include "acp/client_api.hpp"
#include "acp/connection.hpp"
#include "acp/params.hpp"
#include "support/json_read.hpp"
#include "acp/transport.hpp"
#include "runtime/server/editor_host_acp.hpp"
#include "runtime/server/mcp_servers_param.hpp"
#include "runtime/server/session_updates.hpp"
#include "bridge/mcp/acp_tunnel.hpp"
#include "bridge/mcp/client.hpp"
#include "bridge/mcp/naming.hpp"
#include "bridge/process/process_groups.hpp"
#include "runtime/mcp/mcp_manager.hpp"
#include "runtime/tools/mcp_tool.hpp"

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

// Cancels `cancel` after `ms` (when positive), as a user pressing stop mid-call.
void cancel_after(asio::steady_timer& timer, support::CancelSource& cancel, int ms) {
  if (ms <= 0) return;
  timer.expires_after(std::chrono::milliseconds(ms));
  timer.async_wait([&cancel](boost::system::error_code ec) {
    if (!ec) cancel.cancel();
  });
}

void out(json::object o) {
  std::string line = json::serialize(o) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

class NullTransport : public acp::Transport {
 public:
  void send(std::string) override {}
};

#include <any>

// Enough of a ToolContext to run an McpTool outside the agent loop: always allowed.
class ProbeContext : public runtime::tools::ToolContext {
 public:
  ProbeContext(const runtime::ToolEnv& env, runtime::EditorHost& host, support::CancelSource& cancel, asio::thread_pool& pool)
      : env_(env), host_(host), cancel_(cancel), pool_(pool) {}
  const runtime::ToolEnv& env() override { return env_; }
  support::CancelSource& cancel() override { return cancel_; }
  asio::thread_pool& blocking_pool() override { return pool_; }
  const std::string& tool_call_id() override { return id_; }
  // Only MCP tools run in this context; they never reach an executor.
  runtime::Executor& executor() override { throw std::logic_error("no executor in this context"); }
  std::any& prepared() override { return prepared_; }
  asio::awaitable<json::object> elicit(json::object request) override {
    co_return co_await host_.elicit(env_.session_id, id_, std::move(request), &cancel_);
  }
  // What the tool declared before running (always allowed here).
  void declared(runtime::tools::Permission p) {
    permissions.push_back(p == runtime::tools::Permission::Execute ? "execute" : p == runtime::tools::Permission::Edit ? "edit" : "none");
  }
  void update(runtime::ToolCallFields fields) override {
    auto o = runtime::server::encode_tool_call(id_, fields);
    o.erase("toolCallId");
    updates.push_back(std::move(o));
  }
  void show_plan(std::vector<runtime::PlanEntry>) override {}  // only MCP tools run here; they have no plan
  json::array updates;
  json::array permissions;

 private:
  const runtime::ToolEnv& env_;
  runtime::EditorHost& host_;
  support::CancelSource& cancel_;
  asio::thread_pool& pool_;
  std::string id_ = "probe-call";
  std::any prepared_;
};

struct Call {
  std::string tool;
  json::object args;
};

json::object result_json(const runtime::tools::ToolResult& r) {
  runtime::ToolCallFields shown;
  shown.content = r.content;
  auto content = runtime::server::encode_tool_call("", shown).at("content");
  return json::object{{"text", r.text}, {"isError", r.is_error}, {"content", content}, {"rawOutput", r.raw_output}};
}

// Lists the tools through the manager and runs `calls` through the Tool interface.
asio::awaitable<json::object> run_manager(asio::any_io_executor ex, runtime::mcp::McpManager& mgr, const runtime::ToolEnv& env,
                                          runtime::EditorHost& host, asio::thread_pool& pool, std::vector<Call> calls,
                                          int cancel_after_ms, int delay_ms) {
  json::object report;
  mgr.start_all();
  support::CancelSource turn;
  std::vector<std::unique_ptr<runtime::tools::Tool>> tools;
  try {
    // The probe checks what the transport delivers, whole; the model's cut of a long result
    // (max_mcp_output_bytes) is tested through the agent (mcp-limits.test.mjs).
    runtime::config::McpLimits whole;
    whole.output_bytes = std::numeric_limits<std::size_t>::max();
    tools = co_await mgr.tools_for_turn(&turn, nullptr, whole);
  } catch (const runtime::mcp::RequiredServerUnavailable& e) {
    report["error"] = json::object{{"code", acp::error_code::kInternalError}, {"message", e.what()}};
  }
  json::array names, specs;
  for (const auto& t : tools) {
    names.push_back(json::value(t->name()));
    auto spec = t->spec();
    specs.push_back(json::object{{"name", spec.name}, {"description", spec.description}, {"parameters", spec.parameters}});
  }
  report["tools"] = std::move(names);
  report["specs"] = std::move(specs);
  json::array status;
  for (const auto& s : mgr.status())
    status.push_back(json::object{{"id", s.id}, {"transport", s.transport}, {"state", runtime::mcp::state_name(s.state)},
                                  {"error", s.error}, {"tools", s.tool_count}});
  report["status"] = std::move(status);
  if (delay_ms > 0) {
    asio::steady_timer t(ex, std::chrono::milliseconds(delay_ms));
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  json::array results;
  for (auto& c : calls) {
    runtime::tools::Tool* tool = nullptr;
    for (auto& t : tools)
      if (t->name() == c.tool) tool = t.get();
    for (auto& t : tools)  // the server's own name works too
      if (!tool && mgr.specs().size() == 1 && t->name() == bridge::mcp::qualified_tool_name(mgr.specs()[0].id, c.tool))
        tool = t.get();
    if (!tool) {
      results.push_back(json::object{{"tool", c.tool}, {"missing", true}});
      continue;
    }
    support::CancelSource cancel;
    asio::steady_timer timer(ex);
    cancel_after(timer, cancel, cancel_after_ms);
    ProbeContext ctx(env, host, cancel, pool);
    const auto t0 = std::chrono::steady_clock::now();
    json::object r{{"tool", c.tool}};
    try {
      auto request = co_await tool->approval(ctx, c.args);
      ctx.declared(request.permission);
      auto res = co_await tool->run(ctx, c.args);
      r["result"] = result_json(res);
    } catch (const runtime::tools::ToolCancelled&) {
      r["cancelled"] = true;
    }
    timer.cancel();
    r["ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    r["updates"] = ctx.updates;
    r["permissions"] = ctx.permissions;
    results.push_back(std::move(r));
  }
  report["calls"] = std::move(results);
  json::array status_after;
  for (const auto& s : mgr.status())
    status_after.push_back(json::object{{"id", s.id}, {"state", runtime::mcp::state_name(s.state)}, {"error", s.error}});
  report["statusAfter"] = std::move(status_after);
  co_return report;
}

int usage() {
  std::fprintf(stderr, "usage: mcp_probe [options] -- stdio CMD ARGS... | http URL | sse URL\n       mcp_probe --acp\n");
  return 2;
}

int run_cli(int argc, char** argv) {
  bridge::mcp::ServerSpec spec;
  spec.id = "probe";
  spec.startup_timeout = 15s;
  spec.tool_timeout = 30s;
  std::vector<std::string> roots;
  std::vector<Call> calls, raw_calls;
  std::optional<Call> bench;
  int bench_n = 0, cancel_after_ms = 0, hold_ms = 0;
  bool exit_on_eof = false;
  int delay_ms = 0;
  int i = 1;
  auto parse_obj = [](const char* s) {
    auto v = json::parse(s);
    if (!v.is_object()) throw std::runtime_error(std::string("not a JSON object: ") + s);
    return v.as_object();
  };
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--id" && i + 1 < argc) spec.id = argv[++i];
    else if (a == "--tools" && i + 1 < argc) {
      std::vector<std::string> list;
      std::string s = argv[++i];
      std::size_t p = 0;
      while (p <= s.size()) {
        auto c = s.find(',', p);
        if (c == std::string::npos) c = s.size();
        if (c > p) list.push_back(s.substr(p, c - p));
        p = c + 1;
      }
      spec.tools = list;
    } else if (a == "--root" && i + 1 < argc) roots.push_back(argv[++i]);
    else if (a == "--timeout-ms" && i + 1 < argc) spec.startup_timeout = std::chrono::milliseconds(std::stoll(argv[++i]));
    else if (a == "--tool-timeout-ms" && i + 1 < argc) spec.tool_timeout = std::chrono::milliseconds(std::stoll(argv[++i]));
    else if (a == "--call" && i + 2 < argc) {
      std::string t = argv[++i];
      calls.push_back({t, parse_obj(argv[++i])});
    } else if (a == "--raw-call" && i + 2 < argc) {
      std::string t = argv[++i];
      raw_calls.push_back({t, parse_obj(argv[++i])});
    } else if (a == "--bench" && i + 3 < argc) {
      std::string t = argv[++i];
      bench = Call{t, parse_obj(argv[++i])};
      bench_n = std::stoi(argv[++i]);
    } else if (a == "--cancel-after-ms" && i + 1 < argc) cancel_after_ms = std::stoi(argv[++i]);
    else if (a == "--hold-ms" && i + 1 < argc) hold_ms = std::stoi(argv[++i]);
    else if (a == "--required") spec.required = true;
    else if (a == "--exit-on-stdin-eof") exit_on_eof = true;
    else if (a == "--delay-ms" && i + 1 < argc) delay_ms = std::stoi(argv[++i]);
    else return usage();
  }
  if (i >= argc) return usage();
  std::string kind = argv[i++];
  if (kind == "stdio" && i < argc) {
    bridge::mcp::StdioSpec s;
    s.command = argv[i++];
    for (; i < argc; ++i) s.args.push_back(argv[i]);
    spec.transport = s;
  } else if (kind == "http" && i < argc) {
    spec.transport = bridge::mcp::HttpSpec{argv[i], {}, nullptr};
  } else if (kind == "sse" && i < argc) {
    spec.transport = bridge::mcp::SseSpec{argv[i], {}, nullptr};
  } else {
    return usage();
  }

  asio::io_context ioc(1);
  asio::thread_pool pool(1);
  NullTransport null_transport;
  acp::Connection conn(ioc.get_executor(), null_transport);
  acp::ClientApi client_api(conn);
  runtime::server::AcpEditorHost host(client_api);
  const runtime::ToolEnv env{"probe", roots.empty() ? std::filesystem::current_path() : std::filesystem::path(roots.front()),
                             runtime::Mode::Default};
  int rc = 0;

  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        // The bare client: handshake facts, raw calls, the benchmark.
        if (!raw_calls.empty() || bench) {
          bridge::mcp::TransportDeps deps;
          auto transport = bridge::mcp::make_transport(ex, spec, deps);
          bridge::mcp::Client::Options opts;
          opts.log_id = spec.id;
          opts.roots = [roots] {
            std::vector<bridge::mcp::Root> r;
            for (auto& d : roots) r.push_back({bridge::mcp::file_uri(d), std::filesystem::path(d).filename().string()});
            return r;
          };
          auto client = std::make_shared<bridge::mcp::Client>(ex, transport, opts);
          try {
            const auto t0 = std::chrono::steady_clock::now();
            co_await client->connect(spec.startup_timeout);
            auto tools = co_await client->list_tools(spec.startup_timeout);
            const auto connect_us =
                std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
            json::array names;
            for (auto& t : tools) names.push_back(json::value(t.name));
            out(json::object{{"ev", "connected"},
                             {"protocolVersion", client->protocol_version()},
                             {"serverInfo", client->server_info()},
                             {"tools", names},
                             {"connectUs", connect_us}});
            for (auto& c : raw_calls) {
              json::object r{{"ev", "raw-call"}, {"tool", c.tool}};
              support::CancelSource cancel;
              asio::steady_timer timer(ex);
              cancel_after(timer, cancel, cancel_after_ms);
              try {
                json::object args = c.args;
                auto res = co_await client->call_tool(c.tool, std::move(args), spec.tool_timeout, &cancel);
                r["result"] = res;
              } catch (const bridge::mcp::McpError& e) {
                r["error"] = json::object{{"kind", static_cast<int>(e.kind())}, {"code", e.code()}, {"message", e.what()}};
              }
              timer.cancel();
              out(std::move(r));
            }
            if (bench) {
              std::vector<double> us;
              for (int k = 0; k < bench_n; ++k) {
                json::object args = bench->args;
                const auto a = std::chrono::steady_clock::now();
                co_await client->call_tool(bench->tool, std::move(args), spec.tool_timeout);
                us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
              }
              std::sort(us.begin(), us.end());
              double sum = 0;
              for (double v : us) sum += v;
              out(json::object{{"ev", "bench"},
                               {"n", bench_n},
                               {"meanUs", bench_n ? sum / bench_n : 0.0},
                               {"p50Us", bench_n ? us[us.size() / 2] : 0.0},
                               {"p95Us", bench_n ? us[us.size() * 95 / 100] : 0.0}});
            }
          } catch (const bridge::mcp::McpError& e) {
            out(json::object{{"ev", "error"}, {"kind", static_cast<int>(e.kind())}, {"message", e.what()}});
            rc = 1;
          }
          co_await client->close();
        }
        if (!calls.empty() || (raw_calls.empty() && !bench)) {
          runtime::mcp::McpManager::Deps deps;
          deps.executor = ex;
          for (auto& r : roots) deps.roots.emplace_back(r);
          deps.on_server_event = [](const std::string& id, runtime::mcp::ServerState state, const std::string& detail) {
            const std::string what = state == runtime::mcp::ServerState::Ready ? "restarted" : runtime::mcp::state_name(state);
            out(json::object{{"ev", "server-event"}, {"id", id}, {"message", what + ": " + detail}});
          };
          std::vector<bridge::mcp::ServerSpec> specs{spec};
          runtime::mcp::McpManager mgr(deps, specs);
          auto report = co_await run_manager(ex, mgr, env, host, pool, calls, cancel_after_ms, delay_ms);
          report["ev"] = "manager";
          if (report.contains("error")) rc = 1;
          out(std::move(report));
          if (hold_ms > 0) {
            out(json::object{{"ev", "holding"}});
            asio::steady_timer t(ex, std::chrono::milliseconds(hold_ms));
            co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
          }
          const auto t0 = std::chrono::steady_clock::now();
          co_await mgr.close();
          out(json::object{{"ev", "closed"},
                           {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count()}});
        }
      },
      [&](std::exception_ptr e) {
        if (e) {
          try {
            std::rethrow_exception(e);
          } catch (const std::exception& ex) {
            out(json::object{{"ev", "error"}, {"message", ex.what()}});
            rc = 1;
          }
        }
      });
  // stdin EOF ends the probe (orphan tests): kill every server group synchronously.
  if (exit_on_eof) std::thread([] {
    char buf[256];
    while (::read(STDIN_FILENO, buf, sizeof buf) > 0) {
    }
    bridge::process::kill_all_process_groups();
    std::_Exit(3);
  }).detach();
  ioc.run();
  pool.join();
  std::_Exit(rc);
}

// ---- ACP mode: the probe is an agent; `_probe/run` connects the session's mcpServers. ----
int run_acp() {
  asio::io_context ioc(1);
  asio::thread_pool pool(1);
  auto transport = acp::make_stdio_transport(ioc.get_executor(), STDIN_FILENO, STDOUT_FILENO);
  acp::Connection conn(ioc.get_executor(), *transport);
  acp::ClientApi client_api(conn);
  runtime::server::AcpEditorHost host(client_api);
  bridge::mcp::AcpTunnelRouter router(conn);
  std::vector<std::shared_ptr<runtime::mcp::McpManager>> managers;

  // Requests to the probe are dispatched here rather than by acp::Connection (whose request
  // path reads `id` after `obj["params"]` may have rehashed the object: see the report); the
  // connection still carries our outgoing mcp/message calls, their replies and notifications.
  std::map<std::string, std::function<asio::awaitable<json::value>(json::value)>> handlers;
  handlers["initialize"] = [](json::value) -> asio::awaitable<json::value> {
    json::object caps{{"loadSession", false},
                      {"mcpCapabilities", json::object{{"http", true}, {"sse", true}, {"acp", true}}}};
    co_return json::object{{"protocolVersion", 1}, {"agentCapabilities", std::move(caps)}, {"authMethods", json::array{}}};
  };
  handlers["_probe/run"] = [&](json::value params) -> asio::awaitable<json::value> {
    auto ex = conn.executor();
    const auto& p = params.as_object();
    runtime::server::AcpServerOptions options;
    options.startup_timeout = 10s;
    options.tool_timeout = std::chrono::milliseconds(support::int_at(p, "toolTimeoutMs").value_or(30000));
    std::string cwd(support::str_at(p, "cwd"));
    options.cwd = cwd;
    const json::value servers = p.contains("mcpServers") ? p.at("mcpServers") : json::value(nullptr);
    auto specs = runtime::server::parse_acp_mcp_servers(servers, options);  // throws -32602
    runtime::mcp::McpManager::Deps deps;
    deps.executor = ex;
    deps.tunnel = bridge::mcp::TransportDeps{&conn, &router, {}};
    if (!cwd.empty()) deps.roots.emplace_back(cwd);
    auto mgr = std::make_shared<runtime::mcp::McpManager>(deps, specs);
    managers.push_back(mgr);
    std::vector<Call> calls;
    if (auto* arr = support::arr_at(p, "calls"))
      for (const auto& c : *arr) {
        const auto& o = c.as_object();
        json::object args;
        if (auto* a = support::obj_at(o, "arguments")) args = *a;
        calls.push_back({std::string(support::str_at(o, "tool")), std::move(args)});
      }
    const runtime::ToolEnv env{"probe", cwd.empty() ? std::filesystem::current_path() : std::filesystem::path(cwd),
                               runtime::Mode::Default};
    int cancel_after = static_cast<int>(support::int_at(p, "cancelAfterMs").value_or(0));
    int no_delay = 0;
    auto report = co_await run_manager(ex, *mgr, env, host, pool, calls, cancel_after, no_delay);
    if (!support::bool_at(p, "keepOpen")) co_await mgr->close();
    co_return report;
  };
  auto on_message = [&](acp::IncomingMessage&& message) {
    const json::object* o = message.problem == acp::IncomingMessage::Problem::None ? message.value.if_object() : nullptr;
    const json::value* method = o ? o->if_contains("method") : nullptr;
    const json::value* id = o ? o->if_contains("id") : nullptr;
    if (!method || !method->is_string() || !id || !handlers.count(std::string(method->as_string()))) {
      conn.handle_message(std::move(message));
      return;
    }
    auto handler = handlers[std::string(method->as_string())];
    json::value rid = *id;
    json::value params = o->contains("params") ? o->at("params") : json::value(nullptr);
    asio::co_spawn(
        ioc,
        [handler, rid, params, &transport = *transport]() -> asio::awaitable<void> {
          json::object reply{{"jsonrpc", "2.0"}, {"id", rid}};
          try {
            reply["result"] = co_await handler(params);
          } catch (const acp::RpcError& e) {
            reply["error"] = json::object{{"code", e.code()}, {"message", e.what()}};
          } catch (const std::exception& e) {
            reply["error"] = json::object{{"code", -32603}, {"message", e.what()}};
          }
          transport.send(json::serialize(reply));
        },
        asio::detached);
  };
  auto guard = asio::make_work_guard(ioc);  // the reader thread posts lines; keep run() alive
  transport->start({
      on_message,
      [&] {
        guard.reset();
        for (auto& m : managers) m->kill_now();
        bridge::process::kill_all_process_groups();
        conn.close();
        ioc.stop();
      },
  });
  ioc.run();
  transport->flush_and_stop();
  pool.join();
  std::_Exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  auto logger = spdlog::stderr_color_mt("mcp_probe");
  const char* level = std::getenv("OPENVAALA_LOG");
  logger->set_level(level ? spdlog::level::from_str(level) : spdlog::level::warn);
  spdlog::set_default_logger(logger);
  try {
    if (argc >= 2 && std::string(argv[1]) == "--acp") return run_acp();
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    out(json::object{{"ev", "error"}, {"message", e.what()}});
    return 1;
  }
}
