// `openvaala acp`: wires stdio, the JSON-RPC connection and the agent on one io_context.
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <list>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "acp/connection.hpp"
#include "acp/network_auth.hpp"
#include "acp/network_server.hpp"
#include "acp/transport.hpp"
#include "app/cli.hpp"
#include "app/network_clients.hpp"
#include "app/redacting_sink.hpp"
#include "bridge/process/process_groups.hpp"
#include "bridge/process/orphan_guard.hpp"
#include "bridge/process/sandbox.hpp"
#include "runtime/server/acp_agent.hpp"
#include "runtime/config/paths.hpp"
#include "runtime/config/secrets.hpp"

namespace app {

namespace {

// Logs go to <data dir>/logs/openvaala.log (at OPENVAALA_LOG's level, default info) and to stderr,
// never to stdout. stderr carries warnings and errors only (OPENVAALA_LOG_STDERR=<level> for
// more): editors show every stderr line to the user, and acp.el turns each into an error.
void setup_logging() {
  const char* level = std::getenv("OPENVAALA_LOG");
  const auto file_level = level && *level ? spdlog::level::from_str(level) : spdlog::level::info;
  const char* stderr_env = std::getenv("OPENVAALA_LOG_STDERR");
  const auto stderr_level = stderr_env && *stderr_env ? spdlog::level::from_str(stderr_env)
                                                      : std::max(file_level, spdlog::level::warn);
  auto stderr_sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  stderr_sink->set_level(stderr_level);
  std::vector<spdlog::sink_ptr> sinks{std::make_shared<RedactingSink>(stderr_sink)};
  try {
    auto dir = runtime::config::data_dir() / "logs";
    std::error_code ec;
    runtime::config::create_private_directories(dir, ec);
    if (ec) throw std::system_error(ec);
    auto file_sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>((dir / "openvaala.log").string());
    file_sink->set_level(file_level);
    sinks.push_back(std::make_shared<RedactingSink>(file_sink));
  } catch (const std::exception&) {
    // A read-only home must not stop the server.
  }
  auto logger = std::make_shared<spdlog::logger>("openvaala", sinks.begin(), sinks.end());
  // The logger passes what either sink wants; each sink keeps its own level.
  logger->set_level(std::min(file_level, stderr_level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

// SIGHUP reloads the configuration (the keys first, then `reload`); SIGTERM and SIGINT `stop`.
// One for the stdio server and the network one.
class SignalWatch {
 public:
  SignalWatch(boost::asio::io_context& ioc, std::function<void()> reload, std::function<void(const char*)> stop)
      : signals_(ioc, SIGTERM, SIGINT, SIGHUP), reload_(std::move(reload)), stop_(std::move(stop)) {
    wait();
  }

 private:
  void wait() {
    signals_.async_wait([this](boost::system::error_code ec, int sig) {
      if (ec) return;
      if (sig != SIGHUP) return stop_(sig == SIGTERM ? "SIGTERM" : "SIGINT");
      spdlog::info("SIGHUP: reloading the configuration");
      runtime::config::remember_configured_keys(runtime::config::config_root());
      reload_();
      wait();
    });
  }

  boost::asio::signal_set signals_;
  std::function<void()> reload_;
  std::function<void(const char*)> stop_;
};

// What both servers (stdio and network) set up before serving: the keys configured now, the
// orphan guard, and the sandbox helper, which is this program (`openvaala sandbox`) by its path:
// editors' terminals run it too. Without it, commands in a sandboxed mode are not run at all.
void start_serving() {
  runtime::config::remember_configured_keys(runtime::config::config_root());
  bridge::process::enable_orphan_guard();
  std::error_code exe_ec;
  bridge::process::sandbox::set_helper_program(std::filesystem::read_symlink("/proc/self/exe", exe_ec));
}

}  // namespace

int run_acp_server() {
  std::signal(SIGPIPE, SIG_IGN);
  setup_logging();
  start_serving();
  boost::asio::io_context ioc(1);
  // One pool thread at start, for the engine load; three more join once the io thread runs (see
  // below): creating them up front cost about 0.9 ms of spawn -> initialize.
  boost::asio::thread_pool pool(1);
  std::vector<std::thread> more_pool_threads;
  auto transport = acp::make_stdio_transport(ioc.get_executor(), STDIN_FILENO, STDOUT_FILENO);
  acp::Connection conn(ioc.get_executor(), *transport);
  runtime::server::AcpAgent agent(conn, pool);

  bool stopping = false;
  auto stop = [&](const char* why) {
    if (stopping) return;
    stopping = true;
    spdlog::info("shutting down: {}", why);
    agent.prepare_exit();
    conn.close();
    ioc.stop();
  };
  SignalWatch signals(ioc, [&] { agent.reload_config(); }, stop);

  transport->start({
      [&](acp::IncomingMessage&& message) { conn.handle_message(std::move(message)); },
      [&] { stop("stdin closed or stdout broken: the client disconnected"); },
  });
  // Posted after the transport's first read: an initialize that is already there is answered first.
  boost::asio::post(ioc, [&] {
    for (int i = 0; i < 3; ++i) more_pool_threads.emplace_back([&pool] { pool.attach(); });
  });
  ioc.run();
  // Nothing we started may outlive us: every MCP server's group is signalled at once; the
  // orphan guard gives them their grace period after we are gone, so exiting does not wait.
  bridge::process::end_all_process_groups_on_exit();
  transport->flush_and_stop();
  pool.join();  // local commands were told to stop; their process groups are killed
  for (auto& t : more_pool_threads) t.join();
  spdlog::shutdown();
  // The reader thread may still sit in read(); exit without waiting for it.
  std::_Exit(0);
}

// The network server's options from the command line; throws std::runtime_error (a message for
// the user) when the address does not parse or the token file is unfit.
static acp::NetworkServerOptions network_options(const ListenArgs& args) {
  acp::NetworkServerOptions options;
  const auto address = acp::parse_listen_address(args.address);
  if (!address) throw std::runtime_error("--listen takes HOST:PORT (e.g. 127.0.0.1:8765), got '" + args.address + "'");
  options.host = address->host;
  options.port = address->port;
  if (!args.token_file.empty()) options.token = acp::read_token_file(args.token_file);
  options.tls_cert = args.tls_cert;
  options.tls_key = args.tls_key;
  options.allowed_origins = args.allowed_origins;
  options.max_connections = args.max_connections;
  options.max_sessions = args.max_sessions;
  options.idle_timeout = std::chrono::seconds(args.idle_timeout_seconds);
  return options;
}

// How long SIGTERM waits for the cancelled turns to end (journaled) before the process exits.
constexpr auto kStopDeadline = std::chrono::milliseconds(1200);

int run_acp_network_server(const ListenArgs& args) {
  std::signal(SIGPIPE, SIG_IGN);
  setup_logging();
  acp::NetworkServerOptions options;
  try {
    options = network_options(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "openvaala: %s\n", e.what());
    return 2;
  }
  start_serving();
  boost::asio::io_context ioc(1);
  boost::asio::thread_pool pool(4);
  NetworkClients clients(ioc, pool);
  auto on_connection = [&](std::unique_ptr<acp::Transport> transport) { clients.serve(std::move(transport)); };
  std::unique_ptr<acp::NetworkServer> server;
  try {
    server = std::make_unique<acp::NetworkServer>(ioc.get_executor(), options, on_connection);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "openvaala: %s\n", e.what());
    return 2;
  }
  const bool ipv6 = options.host.find(':') != std::string::npos;
  const std::string authority = (ipv6 ? "[" + options.host + "]" : options.host) + ":" + std::to_string(server->port());
  const char* secure = server->tls() ? "s" : "";
  std::fprintf(stderr, "openvaala: listening on ws%s://%s/acp (WebSocket) and http%s://%s/acp (Streamable HTTP)\n",
               secure, authority.c_str(), secure, authority.c_str());
  std::fflush(stderr);
  server->start();

  auto reload = [&] { clients.reload_config(); };
  bool stopping = false;
  // Running turns end as cancelled and their ends are journaled before the process exits, within
  // kStopDeadline (the exit itself must come within 2 s of the signal).
  auto stop = [&](const char* why) {
    if (stopping) return;
    stopping = true;
    spdlog::info("shutting down: {}", why);
    server->stop();
    clients.stop(kStopDeadline, [&] { ioc.stop(); });
  };
  SignalWatch signals(ioc, reload, stop);
  ioc.run();
  bridge::process::end_all_process_groups_on_exit();
  clients.flush_and_stop();
  pool.join();
  spdlog::shutdown();
  std::_Exit(0);
}

}  // namespace app
