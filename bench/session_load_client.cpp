// session/load as a native editor sees it: Zed launches agents with Rust's std::process::Command
// (posix_spawn, plain pipes) and reads their stdout natively, so the client's own share is small
// and what is left is the agent. session_load_bench.mjs --native runs this once per run.
//
//   session_load_client <agent> <cwd> <sessionId> [method] [--answer-only]
//
// Spawns `<agent> acp` in <cwd> (environment inherited, stderr to /dev/null) with pipes for
// stdin and stdout, sends `initialize`, then `<method>` (default session/load) for <sessionId>,
// and counts the session/update lines until the method's response. Once the agent has used no
// CPU for 200 ms it reads the agent's peak RSS, closes its stdin and waits for it. Prints one
// JSON object: loadMs (request written -> response read), cpuMs (agent user+sys CPU over the
// same span), cpuIdleMs (… until idle), peakMiB, rssBeforeMiB (after initialize), updates, outMiB.
// --answer-only: no wait for idleness, stdin closed right after the answer (for timing the whole
// process from outside: spawn, initialize, load, exit).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kUpdatePrefix = R"({"jsonrpc":"2.0","method":"session/update")";

std::string proc_file(pid_t pid, const char* name) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The process's user + system CPU so far, in ms (all its threads).
double cpu_ms(pid_t pid) {
  const std::string stat = proc_file(pid, "stat");
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 0; i <= 12 && rest >> field; ++i) {
    if (i == 11) utime = std::stod(field);
    if (i == 12) stime = std::stod(field);
  }
  return (utime + stime) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double status_mib(pid_t pid, const char* key) {
  const std::string status = proc_file(pid, "status");
  const auto at = status.find(key);
  if (at == std::string::npos) return 0;
  return std::strtod(status.c_str() + at + std::strlen(key) + 1, nullptr) / 1024.0;
}

void write_all(int fd, const std::string& s) {
  for (std::size_t off = 0; off < s.size();) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("write to the agent failed");
    off += static_cast<std::size_t>(n);
  }
}

// Reads the agent's stdout line by line, without copying a line unless it spans two reads.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd), buffer_(1 << 20) {}
  std::size_t updates = 0;
  std::size_t bytes = 0;

  // Reads until the response to request `id`; counts the updates on the way.
  void until_response(int id) {
    const std::string needle = "\"id\":" + std::to_string(id);
    for (;;) {
      const ssize_t n = ::read(fd_, buffer_.data(), buffer_.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error("the agent closed its stdout before answering");
      bytes += static_cast<std::size_t>(n);
      std::string_view rest(buffer_.data(), static_cast<std::size_t>(n));
      bool answered = false;
      for (std::size_t nl; (nl = rest.find('\n')) != std::string_view::npos; rest.remove_prefix(nl + 1)) {
        std::string_view line = rest.substr(0, nl);
        if (!partial_.empty()) {
          partial_.append(line);
          line = partial_;
        }
        if (line.substr(0, kUpdatePrefix.size()) == kUpdatePrefix) ++updates;
        else if (is_response(line, needle)) answered = true;
        partial_.clear();
      }
      partial_.append(rest);
      if (answered) return;
    }
  }

 private:
  // A response (not a notification or a request of the agent's) whose id is `needle`'s.
  static bool is_response(std::string_view line, const std::string& needle) {
    if (line.find("\"method\"") != std::string_view::npos && line.find("\"result\"") == std::string_view::npos) return false;
    const auto at = line.find(needle);
    return at != std::string_view::npos && at + needle.size() < line.size() &&
           (line[at + needle.size()] == ',' || line[at + needle.size()] == '}');
  }

  int fd_;
  std::vector<char> buffer_;
  std::string partial_;
};

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 4) {
    std::fprintf(stderr, "usage: session_load_client <agent> <cwd> <sessionId> [method]\n");
    return 2;
  }
  const std::string agent = argv[1], cwd = argv[2], session_id = argv[3];
  std::string method = "session/load";
  bool answer_only = false;
  for (int i = 4; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--answer-only") answer_only = true;
    else method = argv[i];
  }

  int to_agent[2], from_agent[2];
  if (::pipe2(to_agent, O_CLOEXEC) != 0 || ::pipe2(from_agent, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_agent[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_agent[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> args{const_cast<char*>(agent.c_str()), const_cast<char*>("acp"), nullptr};
  pid_t pid = 0;
  if (int rc = posix_spawn(&pid, agent.c_str(), &actions, nullptr, args.data(), environ); rc != 0)
    throw std::runtime_error("posix_spawn " + agent + ": " + std::strerror(rc));
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_agent[0]);
  ::close(from_agent[1]);

  LineReader out(from_agent[0]);
  write_all(to_agent[1], R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}})"
                         "\n");
  out.until_response(1);
  const double rss_before = status_mib(pid, "VmRSS:");
  out.updates = 0;
  out.bytes = 0;

  const double cpu0 = cpu_ms(pid);
  const auto t0 = Clock::now();
  write_all(to_agent[1], R"({"jsonrpc":"2.0","id":2,"method":")" + method + R"(","params":{"sessionId":)" +
                             json_string(session_id) + R"(,"cwd":)" + json_string(cwd) + R"(,"mcpServers":[]}})" + "\n");
  out.until_response(2);
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  const double cpu = cpu_ms(pid) - cpu0;

  // What the agent does after its answer (reading the conversation the next prompt needs)
  // counts for memory: the peak is read once it has used no CPU for 200 ms.
  double last = cpu_ms(pid);
  for (int idle = 0, waited = 0; !answer_only && idle < 200 && waited < 5000; waited += 50) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double now = cpu_ms(pid);
    idle = now == last ? idle + 50 : 0;
    last = now;
  }
  const double peak = status_mib(pid, "VmHWM:");
  const double cpu_idle = cpu_ms(pid) - cpu0;

  ::close(to_agent[1]);
  char sink[65536];
  while (::read(from_agent[0], sink, sizeof sink) > 0) {
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::printf(
      "{\"loadMs\":%.2f,\"cpu\":%.0f,\"cpuIdle\":%.0f,\"peakMiB\":%.2f,\"rssBeforeMiB\":%.2f,\"updates\":%zu,\"outMiB\":%.2f}\n",
      load_ms, cpu, cpu_idle, peak, rss_before, out.updates, static_cast<double>(out.bytes) / 1048576.0);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "session_load_client: %s\n", e.what());
  return 1;
}
