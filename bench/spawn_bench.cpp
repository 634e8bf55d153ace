// spawn -> `initialize` and spawn -> `session/new` as a lean native client sees them.
//
// acp_bench.mjs measures the same from Node, whose child_process.spawn forks a ~50 MB process
// and alone costs several ms on a small VM (its `spawn_floor_ms_median`). Editors that launch
// agents natively (Zed: Rust's std::process::Command, which uses posix_spawn) pay far less, so
// this program measures what our binary costs with the launcher's share kept small: posix_spawn,
// pipes, poll. Interleaved with a `cat` floor run by run, so load changes hit both alike.
//
//   spawn_bench <openvaala> <runs> <cwd>        (environment inherited; prints one JSON object)
//   spawn_bench --rtt <openvaala> <count> <cwd>
//       the round trip of a trivial request (an unknown method: read, parse, dispatch, answer,
//       write) to one running agent, in turn with a line echoed by `cat` (the floor: one process
//       that reads and writes on one thread), `count` of each after 200 warm-up pairs.
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Child {
  pid_t pid = -1;
  int in = -1;   // our end of its stdin
  int out = -1;  // our end of its stdout
  std::string pending;

  Child(const std::vector<std::string>& argv) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) throw std::runtime_error("posix_spawn " + argv[0]);
    posix_spawn_file_actions_destroy(&fa);
    close(to_child[0]);
    close(from_child[1]);
    in = to_child[1];
    out = from_child[0];
  }

  void send(const std::string& line) {
    std::string s = line + "\n";
    if (write(in, s.data(), s.size()) != static_cast<ssize_t>(s.size())) throw std::runtime_error("write");
  }

  // Reads until a line containing `needle` arrives; returns that line.
  std::string await_line(const std::string& needle) {
    char buf[65536];
    for (;;) {
      for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
        std::string line = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        if (line.find(needle) != std::string::npos) return line;
      }
      pollfd p{out, POLLIN, 0};
      if (poll(&p, 1, 10000) <= 0) throw std::runtime_error("no answer within 10 s");
      ssize_t n = read(out, buf, sizeof buf);
      if (n <= 0) throw std::runtime_error("child closed its stdout");
      pending.append(buf, static_cast<std::size_t>(n));
    }
  }

  ~Child() {
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
};

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

int round_trips(const std::string& bin, int count, const std::string& cwd) {
  Child agent({bin, "acp"});
  Child cat({"/bin/cat"});
  agent.send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}})");
  agent.await_line(R"("id":1)");
  agent.send(R"({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":")" + cwd + R"(","mcpServers":[]}})");
  agent.await_line(R"("id":2)");
  std::vector<double> floor, trivial;
  for (int i = 0; i < count + 200; i++) {
    const std::string id = std::to_string(i + 10);
    const std::string request = R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"bench/none","params":{}})";
    auto t0 = Clock::now();
    cat.send(request);
    cat.await_line(R"("id":)" + id + ",");
    const double f = ms_since(t0);
    t0 = Clock::now();
    agent.send(request);
    std::string answer = agent.await_line(R"("id":)" + id + ",");
    const double a = ms_since(t0);
    if (answer.find("-32601") == std::string::npos) {
      std::fprintf(stderr, "unexpected answer: %s\n", answer.c_str());
      return 1;
    }
    if (i < 200) continue;
    floor.push_back(f * 1000);
    trivial.push_back(a * 1000);
  }
  auto pct = [](std::vector<double> xs, double q) {
    std::sort(xs.begin(), xs.end());
    return xs[static_cast<std::size_t>(q * (xs.size() - 1))];
  };
  std::printf(R"({"count":%d,"floor_us_median":%.1f,"floor_us_p90":%.1f,"trivial_us_median":%.1f,"trivial_us_p10":%.1f,"trivial_us_p90":%.1f})"
              "\n",
              count, median(floor), pct(floor, 0.9), median(trivial), pct(trivial, 0.1), pct(trivial, 0.9));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--rtt") return round_trips(argv[2], std::atoi(argv[3]), argv[4]);
  if (argc != 4) {
    std::fprintf(stderr, "usage: spawn_bench <openvaala> <runs> <cwd>\n");
    return 2;
  }
  const std::string bin = argv[1], cwd = argv[3];
  const int runs = std::atoi(argv[2]);
  const std::string initialize = R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}})";
  const std::string new_session = R"({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":")" + cwd + R"(","mcpServers":[]}})";

  std::vector<double> floor, init, session;
  for (int i = 0; i < runs + 5; i++) {  // the first 5 warm the page cache and are dropped
    double f, a, b;
    {
      auto t0 = Clock::now();
      Child cat({"/bin/cat"});
      cat.send("{}");
      cat.await_line("{}");
      f = ms_since(t0);
    }
    {
      auto t0 = Clock::now();
      Child agent({bin, "acp"});
      agent.send(initialize);
      agent.await_line(R"("id":1)");
      a = ms_since(t0);
      agent.send(new_session);
      std::string answer = agent.await_line(R"("id":2)");
      b = ms_since(t0);
      if (answer.find("sessionId") == std::string::npos) {
        std::fprintf(stderr, "session/new failed: %s\n", answer.c_str());
        return 1;
      }
    }
    if (i < 5) continue;
    floor.push_back(f);
    init.push_back(a);
    session.push_back(b);
  }
  std::printf(R"({"runs":%d,"floor_ms_median":%.2f,"initialize_ms_median":%.2f,"initialize_ms_min":%.2f,"session_new_ms_median":%.2f})"
              "\n",
              runs, median(floor), median(init), *std::min_element(init.begin(), init.end()), median(session));
}
