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
//   spawn_bench --relay <openvaala> [chunks=100000] [runs=7] [cwd] [--only agent|floor] [--warmup 1]
//       chunk relay: how fast `openvaala acp` turns a streamed model answer of `chunks` text deltas
//       into `session/update` `agent_message_chunk` lines on its stdout, against its floor. The
//       model is an HTTP/1.1 server on a thread of this process (loopback, port 0) that answers
//       `POST .../chat/completions` with the OpenAI stream tests/fake-model sends (same JSON per
//       delta, chunked transfer encoding), prebuilt in memory and written in 64 KiB chunks, so it
//       is never the bottleneck. Agent: a fresh `openvaala acp` per run with a private config
//       home (temp dir) naming that server; time from writing `session/prompt` to its response,
//       counting chunk lines on the way. Floor: this client reading the same stream straight
//       from the server over HTTP (reading the stream once is the least relaying can cost).
//       Interleaved run by run; `cwd` defaults to a temp workspace. `--only` runs one side
//       (for timing the whole process from outside).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
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

  explicit Child(const std::vector<std::string>& argv, char* const* envp = environ, const char* stderr_path = "/dev/null") {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, stderr_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp) != 0) throw std::runtime_error("posix_spawn " + argv[0]);
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

// ---------- chunk relay (--relay) ----------

bool send_all(int fd, const char* p, std::size_t n) {
  while (n) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

// The model: answers every `POST .../chat/completions` with the same prebuilt stream of N deltas.
class ModelServer {
 public:
  explicit ModelServer(long deltas) {
    // Each frame as tests/fake-model's openaiEvents() writes it (same keys, same order).
    const std::string created = std::to_string(std::time(nullptr));
    const std::string head = R"({"id":"chatcmpl-bench-1","object":"chat.completion.chunk","created":)" + created +
                             R"(,"model":"test-model","system_fingerprint":"fp_fake",)";
    auto frame = [&](const std::string& delta, const char* finish) {
      return "data: " + head + R"("choices":[{"index":0,"delta":)" + delta + R"(,"logprobs":null,"finish_reason":)" +
             finish + "}]}\n\n";
    };
    std::string sse = frame(R"({"role":"assistant","content":""})", "null");
    sse.reserve(static_cast<std::size_t>(deltas) * 240 + 1024);
    for (long i = 0; i < deltas; i++) sse += frame(R"({"content":"c)" + std::to_string(i % 10) + R"("})", "null");
    sse += frame("{}", R"("stop")");
    sse += "data: " + head + R"("choices":[],"usage":{"prompt_tokens":10,"completion_tokens":)" + std::to_string(deltas) +
           R"(,"total_tokens":)" + std::to_string(deltas + 10) + "}}\n\n";
    sse += "data: [DONE]\n\n";
    sse_bytes = sse.size();
    // Node's http server (the fake) sends a body of unknown length chunked, with keep-alive.
    response_ =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\n"
        "connection: keep-alive\r\nx-request-id: req_bench\r\ntransfer-encoding: chunked\r\n\r\n";
    response_.reserve(sse.size() + sse.size() / 4096 + 1024);
    constexpr std::size_t kChunk = 65536;
    char size_line[32];
    for (std::size_t at = 0; at < sse.size(); at += kChunk) {
      const std::size_t len = std::min(kChunk, sse.size() - at);
      std::snprintf(size_line, sizeof size_line, "%zx\r\n", len);
      response_ += size_line;
      response_.append(sse, at, len);
      response_ += "\r\n";
    }
    response_ += "0\r\n\r\n";

    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(listen_fd_, 64) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("model server: cannot listen on 127.0.0.1");
    port = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~ModelServer() {
    shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    std::lock_guard lock(mu_);
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
    for (auto& t : conns_) t.join();
    for (int fd : fds_) close(fd);
    close(listen_fd_);
  }

  int port = 0;
  std::size_t sse_bytes = 0;
  std::atomic<int> chat_requests{0}, model_list_requests{0}, other_requests{0};

 private:
  void accept_loop() {
    for (;;) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // shut down
      }
      std::lock_guard lock(mu_);
      fds_.push_back(fd);
      conns_.emplace_back([this, fd] { serve(fd); });
    }
  }

  static std::size_t header_value(const std::string& lower_head, const char* name, std::string* out) {
    const std::string key = std::string("\r\n") + name + ":";
    std::size_t at = lower_head.find(key);
    if (at == std::string::npos) return 0;
    at += key.size();
    std::size_t end = lower_head.find("\r\n", at);
    *out = lower_head.substr(at, end == std::string::npos ? std::string::npos : end - at);
    return 1;
  }

  // HTTP/1.1 with keep-alive: requests one after the other on the connection.
  void serve(int fd) {
    std::string buf;
    char tmp[65536];
    auto fill = [&] {
      ssize_t n = recv(fd, tmp, sizeof tmp, 0);
      if (n <= 0) return false;
      buf.append(tmp, static_cast<std::size_t>(n));
      return true;
    };
    for (;;) {
      std::size_t end;
      while ((end = buf.find("\r\n\r\n")) == std::string::npos)
        if (!fill()) return;
      std::string head = buf.substr(0, end + 2);
      buf.erase(0, end + 4);
      std::string lower = head;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      const std::size_t sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
      const std::string method = head.substr(0, sp1);
      std::string path = head.substr(sp1 + 1, sp2 - sp1 - 1);
      if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
      std::string v;
      if (header_value(lower, "transfer-encoding", &v) && v.find("chunked") != std::string::npos) {
        while ((end = buf.find("\r\n0\r\n\r\n")) == std::string::npos && buf.rfind("0\r\n\r\n", 0) != 0)
          if (!fill()) return;
        buf.erase(0, end == std::string::npos ? 5 : end + 7);
      } else {
        std::size_t length = header_value(lower, "content-length", &v) ? std::strtoul(v.c_str(), nullptr, 10) : 0;
        while (buf.size() < length)
          if (!fill()) return;
        buf.erase(0, length);
      }
      auto ends_with = [&](std::string_view tail) { return path.size() >= tail.size() && path.ends_with(tail); };
      bool ok;
      if (method == "POST" && ends_with("/chat/completions")) {
        chat_requests++;
        ok = send_all(fd, response_.data(), response_.size());
      } else if (method == "GET" && ends_with("/models")) {
        model_list_requests++;
        ok = send_json(fd, "200 OK", R"({"object":"list","data":[{"id":"test-model","object":"model","created":0,"owned_by":"fake"}]})");
      } else {
        other_requests++;
        ok = send_json(fd, "404 Not Found", R"({"error":{"message":"bench model: no route","type":"not_found"}})");
      }
      if (!ok) return;
    }
  }

  static bool send_json(int fd, const char* status, const std::string& body) {
    std::string r = std::string("HTTP/1.1 ") + status + "\r\ncontent-type: application/json\r\ncontent-length: " +
                    std::to_string(body.size()) + "\r\nconnection: keep-alive\r\n\r\n" + body;
    return send_all(fd, r.data(), r.size());
  }

  std::string response_;
  int listen_fd_ = -1;
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> conns_;
  std::vector<int> fds_;
};

// Splits what arrives on `fd` into lines without copying each one; `on_line` returns true to stop.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}

  template <class F>
  void until(F on_line) {
    for (;;) {
      const char* base = buf_.data();
      for (const char* nl; (nl = static_cast<const char*>(std::memchr(base + pos_, '\n', buf_.size() - pos_)));) {
        std::string_view line(base + pos_, static_cast<std::size_t>(nl - (base + pos_)));
        pos_ = static_cast<std::size_t>(nl - base) + 1;
        if (on_line(line)) return;
      }
      buf_.erase(0, pos_);
      pos_ = 0;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 10000) <= 0) throw std::runtime_error("no output within 10 s");
      const std::size_t had = buf_.size();
      buf_.resize(had + kRead);
      ssize_t n = read(fd_, buf_.data() + had, kRead);
      buf_.resize(had + (n > 0 ? static_cast<std::size_t>(n) : 0));
      if (n <= 0) throw std::runtime_error("the agent closed its stdout");
    }
  }

 private:
  static constexpr std::size_t kRead = 1 << 18;
  int fd_;
  std::string buf_;
  std::size_t pos_ = 0;
};

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

// A JSON-RPC response (not a request of the agent's own) to our request `id`.
bool is_response(std::string_view line, int id) {
  const std::string key = R"("id":)" + std::to_string(id);
  return !contains(line, R"("method")") && (contains(line, key + ",") || contains(line, key + "}"));
}

struct AgentRun {
  double turn_ms = 0, first_chunk_ms = 0;
  long notifications = 0, text_bytes = 0;
  std::string answer;
};

struct FloorRun {
  double ms = 0;
  long deltas = 0;
};

// One fresh agent: initialize, session/new, then the timed session/prompt.
AgentRun agent_run(const std::string& bin, char* const* envp, const std::string& err_log, const std::string& cwd) {
  Child agent({bin, "acp"}, envp, err_log.c_str());
  LineReader out(agent.out);
  agent.send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}})");
  out.until([](std::string_view l) { return is_response(l, 1); });
  agent.send(R"({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":")" + cwd + R"(","mcpServers":[]}})");
  std::string sid;
  out.until([&](std::string_view l) {
    if (!is_response(l, 2)) return false;
    constexpr std::string_view key = R"("sessionId":")";
    if (auto at = l.find(key); at != std::string_view::npos) {
      at += key.size();
      sid = std::string(l.substr(at, l.find('"', at) - at));
    } else {
      throw std::runtime_error("session/new failed: " + std::string(l.substr(0, 500)));
    }
    return true;
  });
  AgentRun r;
  const auto t0 = Clock::now();
  agent.send(R"({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":")" + sid +
             R"(","prompt":[{"type":"text","text":"go"}]}})");
  out.until([&](std::string_view l) {
    if (contains(l, R"("agent_message_chunk")")) {
      if (!r.notifications++) r.first_chunk_ms = ms_since(t0);
      constexpr std::string_view key = R"("text":")";  // the deltas are c0..c9: nothing escaped
      if (auto at = l.find(key); at != std::string_view::npos) {
        at += key.size();
        r.text_bytes += static_cast<long>(l.find('"', at) - at);
      }
      return false;
    }
    if (!is_response(l, 3)) return false;
    r.turn_ms = ms_since(t0);
    r.answer = std::string(l.substr(0, 500));
    return true;
  });
  return r;
}

// The floor: the same stream read straight from the server (HTTP/1.1, chunked body, lines).
FloorRun floor_run(int port) {
  const auto t0 = Clock::now();
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("floor: connect");
  const std::string body =
      R"({"model":"test-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}]})";
  const std::string req = "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:" + std::to_string(port) +
                          "\r\ncontent-type: application/json\r\naccept: text/event-stream\r\nauthorization: Bearer sk-test\r\n"
                          "content-length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  if (!send_all(fd, req.data(), req.size())) throw std::runtime_error("floor: send");

  FloorRun r;
  std::string raw, sse;  // raw: bytes off the socket; sse: the de-chunked body not yet split into lines
  std::size_t pos = 0, left_in_chunk = 0;
  bool headers_done = false, in_chunk = false, need_crlf = false, done = false, saw_done = false;
  std::vector<char> tmp(1 << 18);
  auto scan_lines = [&] {
    std::size_t at = 0;
    for (std::size_t nl; (nl = sse.find('\n', at)) != std::string::npos; at = nl + 1) {
      std::string_view line(sse.data() + at, nl - at);
      if (contains(line, R"("delta":{"content":)")) r.deltas++;
      else if (line == "data: [DONE]") saw_done = true;
    }
    sse.erase(0, at);
  };
  while (!done) {
    ssize_t n = recv(fd, tmp.data(), tmp.size(), 0);
    if (n <= 0) throw std::runtime_error("floor: the server closed the connection");
    raw.append(tmp.data(), static_cast<std::size_t>(n));
    if (!headers_done) {
      std::size_t end = raw.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      if (raw.rfind("HTTP/1.1 200", 0) != 0) throw std::runtime_error("floor: " + raw.substr(0, raw.find('\r')));
      pos = end + 4;
      headers_done = true;
    }
    for (;;) {  // chunked transfer encoding: <hex size>CRLF <data> CRLF ... 0 CRLF CRLF
      if (in_chunk) {
        const std::size_t take = std::min(left_in_chunk, raw.size() - pos);
        sse.append(raw, pos, take);
        pos += take;
        left_in_chunk -= take;
        if (left_in_chunk) break;
        in_chunk = false;
        need_crlf = true;
      }
      if (need_crlf) {
        if (raw.size() - pos < 2) break;
        pos += 2;
        need_crlf = false;
      }
      const std::size_t eol = raw.find("\r\n", pos);
      if (eol == std::string::npos) break;
      left_in_chunk = std::strtoul(raw.c_str() + pos, nullptr, 16);
      pos = eol + 2;
      if (!left_in_chunk) {
        done = true;
        break;
      }
      in_chunk = true;
    }
    raw.erase(0, pos);
    pos = 0;
    scan_lines();
  }
  r.ms = ms_since(t0);
  close(fd);
  if (!saw_done) throw std::runtime_error("floor: no [DONE]");
  return r;
}

struct Spread {
  double median, min, max;
};
Spread spread(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return {xs[xs.size() / 2], xs.front(), xs.back()};
}

int relay(int argc, char** argv) {
  std::vector<std::string> pos;
  std::string only;
  int warmup = 1;
  for (int i = 0; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--warmup" && i + 1 < argc) warmup = std::atoi(argv[++i]);
    else pos.push_back(a);
  }
  if (pos.empty() || pos.size() > 4 || (!only.empty() && only != "agent" && only != "floor")) {
    std::fprintf(stderr, "usage: spawn_bench --relay <openvaala> [chunks=100000] [runs=7] [cwd] [--only agent|floor] [--warmup 1]\n");
    return 2;
  }
  const std::string bin = pos[0];
  const long chunks = pos.size() > 1 ? std::atol(pos[1].c_str()) : 100000;
  const int runs = pos.size() > 2 ? std::atoi(pos[2].c_str()) : 7;
  const bool do_agent = only != "floor", do_floor = only != "agent";
  std::signal(SIGPIPE, SIG_IGN);

  // A private config home, as tests/integration/harness.mjs makeConfigHome() writes it.
  char tmpl[] = "/tmp/ov-relay-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
  const std::filesystem::path root = tmpl;
  for (const char* d : {"config", "data", "cache", "home", "ws"}) std::filesystem::create_directories(root / d);
  const std::string cwd = pos.size() > 3 ? pos[3] : (root / "ws").string();
  if (pos.size() <= 3) std::ofstream(root / "ws" / "a.txt") << "a\n";

  ModelServer model(chunks);
  std::ofstream(root / "config" / "config.yaml") << "model: fake/test-model\n"
                                                    "providers:\n"
                                                    "  fake:\n"
                                                    "    api_type: openai\n"
                                                    "    base_url: http://127.0.0.1:" << model.port << "/v1\n"
                                                    "    api_key_env: FAKE_MODEL_KEY\n"
                                                    "    max_retries: 2\n"
                                                    "    idle_timeout_seconds: 2\n";
  // The parent's environment minus anything that could pick another model or config (agentEnv()).
  std::vector<std::string> env;
  for (char** e = environ; *e; e++) {
    std::string_view v = *e;
    if (v.starts_with("OPENAI_") || v.starts_with("ANTHROPIC_") || v.starts_with("OPENVAALA_") || v.starts_with("XDG_") ||
        v.starts_with("HOME=") || v.starts_with("NODE_OPTIONS="))
      continue;
    env.emplace_back(v);
  }
  const std::string home = (root / "home").string();
  for (auto [k, v] : std::initializer_list<std::pair<const char*, std::string>>{
           {"OPENVAALA_CONFIG_DIR", (root / "config").string()},
           {"OPENVAALA_DATA_DIR", (root / "data").string()},
           {"OPENVAALA_CACHE_DIR", (root / "cache").string()},
           {"HOME", home},
           {"XDG_CONFIG_HOME", home + "/.config"},
           {"XDG_DATA_HOME", home + "/.local/share"},
           {"XDG_CACHE_HOME", home + "/.cache"},
           {"FAKE_MODEL_KEY", "sk-test"}})
    env.push_back(std::string(k) + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string err_log = (root / "agent-stderr.log").string();

  std::vector<double> agent_rate, agent_notif_rate, agent_ms, first_ms, floor_rate, floor_ms, ratio;
  long notif_min = -1, notif_max = -1, text_min = -1, text_max = -1;
  try {
    for (int i = 0; i < runs + warmup; i++) {
      AgentRun a;
      FloorRun f;
      // Alternate which side goes first, so neither always runs on a machine the other just warmed.
      for (int side = 0; side < 2; side++) {
        if ((side == 0) == (i % 2 == 0)) {
          if (do_floor) f = floor_run(model.port);
        } else if (do_agent) {
          a = agent_run(bin, envp.data(), err_log, cwd);
          if (!contains(a.answer, R"("stopReason":"end_turn")")) throw std::runtime_error("the prompt did not end the turn: " + a.answer);
        }
      }
      if (do_floor && f.deltas != chunks)
        throw std::runtime_error("floor: " + std::to_string(f.deltas) + " deltas read, " + std::to_string(chunks) + " sent");
      if (i < warmup) continue;
      if (do_agent) {
        agent_rate.push_back(chunks / (a.turn_ms / 1000));
        agent_notif_rate.push_back(a.notifications / (a.turn_ms / 1000));
        agent_ms.push_back(a.turn_ms);
        first_ms.push_back(a.first_chunk_ms);
        notif_min = notif_min < 0 ? a.notifications : std::min(notif_min, a.notifications);
        notif_max = std::max(notif_max, a.notifications);
        text_min = text_min < 0 ? a.text_bytes : std::min(text_min, a.text_bytes);
        text_max = std::max(text_max, a.text_bytes);
      }
      if (do_floor) {
        floor_rate.push_back(chunks / (f.ms / 1000));
        floor_ms.push_back(f.ms);
      }
      if (do_agent && do_floor) ratio.push_back(f.ms / a.turn_ms);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "relay: %s\n(agent stderr and config kept in %s)\n", e.what(), root.c_str());
    return 1;
  }

  std::string out = "{\"chunks\":" + std::to_string(chunks) + ",\"runs\":" + std::to_string(runs) +
                    ",\"sse_bytes\":" + std::to_string(model.sse_bytes);
  char b[512];
  if (do_agent) {
    auto r = spread(agent_rate), n = spread(agent_notif_rate), t = spread(agent_ms), fc = spread(first_ms);
    std::snprintf(b, sizeof b,
                  ",\"agent_deltas_per_s_median\":%.0f,\"agent_deltas_per_s_min\":%.0f,\"agent_deltas_per_s_max\":%.0f,"
                  "\"agent_turn_ms_median\":%.1f,\"agent_first_chunk_ms_median\":%.2f,"
                  "\"agent_notifications_min\":%ld,\"agent_notifications_max\":%ld,\"agent_notifications_per_s_median\":%.0f,"
                  "\"agent_text_bytes_min\":%ld,\"agent_text_bytes_max\":%ld,\"text_bytes_sent\":%ld,\"coalesced\":%s",
                  r.median, r.min, r.max, t.median, fc.median, notif_min, notif_max, n.median, text_min, text_max, 2 * chunks,
                  notif_min == chunks && notif_max == chunks ? "false" : "true");
    out += b;
  }
  if (do_floor) {
    auto r = spread(floor_rate), t = spread(floor_ms);
    std::snprintf(b, sizeof b, ",\"floor_deltas_per_s_median\":%.0f,\"floor_deltas_per_s_min\":%.0f,\"floor_deltas_per_s_max\":%.0f,"
                  "\"floor_ms_median\":%.1f", r.median, r.min, r.max, t.median);
    out += b;
  }
  if (!ratio.empty()) {
    auto q = spread(ratio);
    std::snprintf(b, sizeof b, ",\"agent_over_floor_median\":%.3f,\"agent_over_floor_min\":%.3f,\"agent_over_floor_max\":%.3f",
                  q.median, q.min, q.max);
    out += b;
  }
  std::snprintf(b, sizeof b, ",\"model_requests\":{\"chat\":%d,\"models\":%d,\"other\":%d}}", model.chat_requests.load(),
                model.model_list_requests.load(), model.other_requests.load());
  out += b;
  std::printf("%s\n", out.c_str());
  std::filesystem::remove_all(root);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--relay") return relay(argc - 2, argv + 2);
  if (argc == 5 && std::string(argv[1]) == "--rtt") return round_trips(argv[2], std::atoi(argv[3]), argv[4]);
  if (argc != 4) {
    std::fprintf(stderr, "usage: spawn_bench <openvaala> <runs> <cwd> | --rtt <openvaala> <count> <cwd> | --relay <openvaala> [chunks] [runs] [cwd]\n");
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
