// `openvaala mcp list | login ID | logout ID`: the MCP servers a session in this directory
// would use, with their OAuth sign-in and connection state; OAuth sign-in and sign-out of an
// http/sse server (tokens in <config root>/mcp_tokens.json, mode 0600; never printed).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/this_coro.hpp>

#include <algorithm>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "bridge/mcp/oauth_flow.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/mcp/mcp_server.hpp"
#include "runtime/mcp/server_specs.hpp"

namespace app {

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace eng = runtime::engine;
namespace oauth = bridge::mcp::oauth;

const char* kMcpUsage =
    "Usage: openvaala mcp list [--no-connect]\n"
    "       openvaala mcp login ID\n"
    "       openvaala mcp logout ID\n"
    "\n"
    "list    the MCP servers a session in this directory would use: transport, sign-in state\n"
    "        (none, signed-in, expired, needs sign-in) and connection state (each is connected\n"
    "        once; --no-connect skips that)\n"
    "login   signs in to an http/sse server with OAuth: prints a link to open in a browser and\n"
    "        waits (10 minutes at most) for the redirect to 127.0.0.1\n"
    "logout  forgets that server's tokens (and revokes them when the server offers that)\n"
    "\n"
    "Tokens are kept in <config root>/mcp_tokens.json (mode 0600).\n";

int usage(const std::string& msg) {
  std::fprintf(stderr, "openvaala mcp: %s\n\n%s", msg.c_str(), kMcpUsage);
  return 2;
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "openvaala mcp: %s\n", msg.c_str());
  return 1;
}

// Prints the link on stderr (stdout keeps the result line).
class CliSignIn : public oauth::SignInPresenter {
 public:
  asio::awaitable<void> show(const oauth::SignInPrompt& p, support::CancelSource&) override {
    std::fprintf(stderr, "To sign in to the MCP server %s, open this link in a browser:\n\n  %s\n\nWaiting for the sign-in...\n",
                 p.server_id.c_str(), p.url.c_str());
    std::fflush(stderr);
    co_return;
  }
  void finished(const oauth::SignInPrompt&, bool, const std::string&) override {}
};

template <class F>
auto run_io(F body) {
  asio::io_context ioc(1);
  auto fut = asio::co_spawn(ioc, body(), asio::use_future);
  ioc.run();
  return fut.get();
}

struct Loaded {
  std::shared_ptr<const eng::Engine> engine;
  std::vector<eng::McpServerConfig> servers;  // what a session in cwd would use
};

Loaded load(const fs::path& cwd) {
  runtime::config::Diagnostics diags;
  Loaded l;
  l.engine = eng::Engine::load(runtime::config::config_root(), diags);
  l.servers = l.engine->session_view(cwd).mcp_servers;
  return l;
}

const eng::McpServerConfig* find_server(const Loaded& l, const std::string& id) {
  for (const auto& s : l.servers)
    if (s.id == id) return &s;
  for (const auto& s : l.engine->mcp_servers())
    if (s.id == id) return &s;
  return nullptr;
}

// The configured http/sse server `id`, or the exit code of the error printed.
const eng::McpServerConfig* oauth_server(const Loaded& l, const std::string& id, int& code) {
  auto* s = find_server(l, id);
  if (!s) {
    code = fail("no MCP server '" + id + "' in " + (runtime::config::config_root() / "mcp_servers").string() +
                " or an enabled plugin (see `openvaala mcp list`)");
    return nullptr;
  }
  if (s->transport == eng::McpServerConfig::Transport::Stdio) {
    code = fail("the MCP server '" + id + "' is a stdio server: only http and sse servers sign in");
    return nullptr;
  }
  return s;
}

int login(const Loaded& l, const std::string& id) {
  int code = 0;
  auto* s = oauth_server(l, id, code);
  if (!s) return code;
  auto auth = runtime::mcp::authorizer_for(*s);
  CliSignIn presenter;
  try {
    run_io([&]() -> asio::awaitable<void> { co_await auth->sign_in(presenter, nullptr, std::chrono::seconds(600)); });
  } catch (const std::exception& e) {
    return fail("signing in to " + id + " failed: " + e.what());
  }
  std::printf("Signed in to the MCP server %s (tokens in %s)\n", id.c_str(), auth->store().file().string().c_str());
  return 0;
}

int logout(const Loaded& l, const std::string& id) {
  int code = 0;
  auto* s = oauth_server(l, id, code);
  if (!s) return code;
  auto auth = runtime::mcp::authorizer_for(*s);
  bool had = false;
  try {
    had = run_io([&]() -> asio::awaitable<bool> { co_return co_await auth->sign_out(); });
  } catch (const std::exception& e) {
    return fail("signing out of " + id + " failed: " + e.what());
  }
  std::printf(had ? "Signed out of the MCP server %s\n" : "The MCP server %s was not signed in\n", id.c_str());
  return 0;
}

int list(const Loaded& l, const fs::path& cwd, bool connect) {
  if (l.servers.empty()) {
    std::printf("No MCP servers (add one in %s)\n", (runtime::config::config_root() / "mcp_servers").string().c_str());
    return 0;
  }
  struct Row {
    std::string id, transport, auth, connection;
  };
  std::vector<Row> rows;
  asio::thread_pool spawn_pool(1);
  run_io([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    std::vector<std::shared_ptr<runtime::mcp::McpServer>> servers;
    for (const auto& c : l.servers) {
      auto spec = runtime::mcp::spec_from_config(c, cwd);
      runtime::mcp::McpServer::Env env{ex, {}, {cwd}};
      env.tunnel.spawn_pool = &spawn_pool;
      auto server = std::make_shared<runtime::mcp::McpServer>(env, spec);
      const bool local = std::find(c.executors.begin(), c.executors.end(), "local") != c.executors.end() ||
                         c.transport != eng::McpServerConfig::Transport::Stdio;
      if (connect && local) server->start_in_background();
      servers.push_back(server);
    }
    for (std::size_t i = 0; i < servers.size(); ++i) {
      auto& s = *servers[i];
      const auto& c = l.servers[i];
      Row r;
      r.id = c.id;
      r.transport = std::string(eng::transport_name(c.transport));
      r.auth = "none";
      r.connection = "not connected";
      if (s.state() != runtime::mcp::ServerState::NotStarted) {
        co_await s.ensure(nullptr, false);
        r.connection = s.state() == runtime::mcp::ServerState::Ready
                           ? "connected (" + std::to_string(s.tools().size()) + " tools)"
                           : std::string(runtime::mcp::state_name(s.state())) + (s.error().empty() ? "" : ": " + s.error());
      } else if (connect) {
        r.connection = "not connected (runs on executor " + c.executors.front() + ")";
      }
      if (auto auth = s.authorizer()) r.auth = oauth::auth_state_name(auth->state());
      rows.push_back(std::move(r));
    }
    for (auto& s : servers) co_await s->close();
  });
  for (const auto& r : rows)
    std::printf("%s  %s  auth: %s  connection: %s\n", r.id.c_str(), r.transport.c_str(), r.auth.c_str(),
                r.connection.c_str());
  return 0;
}

}  // namespace

int run_mcp_cli(const std::vector<std::string>& args) {
  if (args.empty()) return usage("no mcp command given");
  const std::string& cmd = args[0];
  if (cmd == "-h" || cmd == "--help") {
    std::fputs(kMcpUsage, stdout);
    return 0;
  }
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (cmd == "list") {
    bool connect = true;
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--no-connect") connect = false;
      else return usage("unknown option for 'mcp list': " + args[i]);
    }
    return list(load(cwd), cwd, connect);
  }
  if (cmd == "login" || cmd == "logout") {
    if (args.size() != 2 || args[1].empty() || args[1][0] == '-') return usage("'mcp " + cmd + "' takes one server id");
    auto loaded = load(cwd);
    return cmd == "login" ? login(loaded, args[1]) : logout(loaded, args[1]);
  }
  return usage("unknown mcp command: " + cmd);
}

}  // namespace app
