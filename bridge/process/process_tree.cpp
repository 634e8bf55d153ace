#include "bridge/process/process_tree.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "support/file_io.hpp"

namespace bridge::process {

namespace fs = std::filesystem;

namespace {

// The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses):
// [0] is the state (field 3), [19] the start time (field 22).
std::vector<std::string> stat_fields(pid_t pid) {
  std::vector<std::string> fields;
  auto text = support::read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return fields;
  const auto close = text->rfind(')');
  if (close == std::string::npos) return fields;
  std::istringstream in(text->substr(close + 1));
  for (std::string f; in >> f;) fields.push_back(std::move(f));
  return fields;
}

}  // namespace

StartTime start_time(pid_t pid) {
  const auto f = stat_fields(pid);
  return f.size() > 19 ? std::strtoull(f[19].c_str(), nullptr, 10) : 0;
}

bool still_running(pid_t pid, StartTime start) {
  const auto f = stat_fields(pid);
  return f.size() > 19 && f[0] != "Z" && f[0] != "X" && std::strtoull(f[19].c_str(), nullptr, 10) == start;
}

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    auto text = support::read_file(it->path() / "children");
    if (!text) continue;
    std::istringstream in(*text);
    for (long c; in >> c;) out.push_back(static_cast<pid_t>(c));
  }
  return out;
}

void add_descendants(pid_t root, std::map<pid_t, StartTime>& seen, pid_t skip) {
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t c : children_of(p)) {
      if (c == skip) continue;
      const StartTime t = start_time(c);
      if (t == 0) continue;
      auto [it, added] = seen.try_emplace(c, t);
      if (!added && it->second == t) continue;  // known, and its children were walked from it
      it->second = t;
      todo.push_back(c);
    }
  }
}

}  // namespace bridge::process
