// Skills and AGENTS.md read on a session's default executor (DESIGN §10).
#include "runtime/agent/remote/executor_files.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "runtime/agent/session.hpp"
#include "support/run_blocking.hpp"

namespace runtime {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxOutput = 32 * 1024 * 1024;

// Prints `OVWD <dir>`, `OVHOME <dir>`, then per file `OVFILE <S|A> <bytes> <path>`, its bytes and
// a newline. SKILL.md files over 1 MB are left out; AGENTS.md is cut after 1 MB and one byte (the
// engine marks it truncated). The AGENTS.md chain runs from the git root down to the working
// directory (the working directory alone outside a repository), shallowest first.
constexpr const char* kScript = R"SH(exec 2>/dev/null
wd=$(pwd -P); printf 'OVWD %s\nOVHOME %s\n' "$wd" "$HOME"
emit() {
  [ -f "$2" ] && [ -r "$2" ] || return 0
  n=$(wc -c < "$2" | tr -d ' ') || return 0
  if [ "$n" -gt 1048576 ]; then [ "$1" = S ] && return 0; n=1048577; fi
  printf 'OVFILE %s %s %s\n' "$1" "$n" "$2"; head -c "$n" "$2"; printf '\n'
}
if [ "$OV_SKILLS" = 1 ]; then
  for b in "$wd/.agents/skills" "$wd/.claude/skills" "$HOME/.agents/skills" "$HOME/.claude/skills"; do
    [ -d "$b" ] || continue
    find -L "$b" -maxdepth 34 -name SKILL.md -type f | while IFS= read -r f; do emit S "$f"; done
  done
fi
r=$wd; while [ ! -e "$r/.git" ] && [ "$r" != / ]; do r=$(dirname "$r"); done
[ -e "$r/.git" ] || r=$wd
list=; d=$wd
while :; do list="$d
$list"; [ "$d" = "$r" ] && break; d=$(dirname "$d"); done
printf '%s' "$list" | while IFS= read -r d; do [ -n "$d" ] && emit A "${d%/}/AGENTS.md"; done
exit 0
)SH";


// The AGENTS.md of `executor` for the prompt: the keys in agents_md_included name it, and so do
// the headings the model sees.
std::vector<engine::AgentsMdFile> labelled(std::vector<engine::AgentsMdFile> files, const std::string& executor) {
  for (auto& f : files) f.path = executor + ":" + f.path.string();
  return files;
}

}  // namespace

engine::ExecutorSnapshot parse_executor_files(const std::string& executor_id, std::string_view out) {
  engine::ExecutorSnapshot snap;
  snap.executor = executor_id;
  std::size_t pos = 0;
  while (pos < out.size()) {
    auto nl = out.find('\n', pos);
    if (nl == std::string_view::npos) break;
    std::string_view line = out.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.rfind("OVWD ", 0) == 0) {
      snap.workdir = std::string(line.substr(5));
    } else if (line.rfind("OVHOME ", 0) == 0) {
      snap.home = std::string(line.substr(7));
    } else if (line.rfind("OVFILE ", 0) == 0 && line.size() > 9) {
      const char kind = line[7];
      std::string rest(line.substr(9));
      char* end = nullptr;
      const std::size_t size = std::strtoull(rest.c_str(), &end, 10);
      if (!end || *end != ' ' || pos + size > out.size()) break;  // cut short: keep what came whole
      fs::path path(std::string(end + 1));
      std::string text(out.substr(pos, size));
      pos += size + 1;  // and the newline after it
      if (kind == 'S') snap.skill_files.emplace(std::move(path), std::move(text));
      else if (auto f = engine::agents_md_file(std::move(path), std::move(text))) snap.agents_md.push_back(std::move(*f));
    }
  }
  return snap;
}

boost::asio::awaitable<engine::ExecutorSnapshot> read_executor_files(Executor& executor, bool with_skills,
                                                                     support::CancelSource* cancel) {
  const auto& info = executor.info();
  if (!info.can_run) {
    // Files only: the working directory's AGENTS.md.
    engine::ExecutorSnapshot snap;
    snap.executor = info.id;
    snap.workdir = co_await executor.working_directory(cancel);
    const std::string file = (snap.workdir / "AGENTS.md").string();
    auto st = co_await executor.stat(file, cancel);
    if (st.exists && !st.is_directory)
      if (auto f = engine::agents_md_file(file, co_await executor.read_file(file, cancel))) snap.agents_md.push_back(std::move(*f));
    co_return snap;
  }
  RunRequest request;
  request.command = std::string("OV_SKILLS=") + (with_skills ? "1" : "0") + "\n" + kScript;
  request.timeout = std::chrono::milliseconds(60'000);
  request.max_output_bytes = kMaxOutput;
  auto result = co_await executor.run(std::move(request), cancel);
  if (result.exit_code != 0 || result.output.rfind("OVWD ", 0) != 0)
    throw ExecutorError("executor '" + info.id + "': cannot read its skills and AGENTS.md (exit " +
                        std::to_string(result.exit_code.value_or(-1)) + ")");
  co_return parse_executor_files(info.id, result.output);
}

boost::asio::awaitable<std::string> agents_md_on_first_use(Session& s, Executor& ex, boost::asio::thread_pool& pool,
                                                                          support::CancelSource* cancel) {
  const std::string id = ex.info().id;
  if (id == s.settings.executor || !s.services.executors_used.insert(id).second) co_return std::string();
  std::vector<engine::AgentsMdFile> files;
  try {
    if (id == config::kLocalExecutor) {
      auto job = [cwd = s.settings.cwd] { return engine::load_agents_md_chain(cwd); };
      files = co_await support::run_blocking(pool, std::move(job));
    } else {
      files = (co_await read_executor_files(ex, false, cancel)).agents_md;
    }
  } catch (const ExecutorError& e) {
    spdlog::warn("session {}: AGENTS.md of executor {} not read: {}", s.id, id, e.what());
    s.services.executors_used.erase(id);  // tried again at the next use
    co_return std::string();
  }
  std::vector<engine::AgentsMdFile> fresh;
  for (auto& f : labelled(std::move(files), id))
    if (s.conversation.agents_md_included.insert(f.path).second) fresh.push_back(std::move(f));
  if (fresh.empty()) co_return std::string();
  co_return "\n\nThese AGENTS.md files are on the executor `" + id + "` (first used just now):\n\n" +
      engine::agents_md_prompt(fresh);
}

boost::asio::awaitable<std::string> agents_md_after_read_on(Session& s, Executor& ex, const std::string& workdir,
                                                            const std::string& path, support::CancelSource* cancel) {
  const auto folders = engine::folders_below(workdir, path, false);  // read_file reads files
  const std::string id = ex.info().id;
  const std::string label = id == s.settings.executor ? "" : id + ":";  // as the session's own chain is keyed
  std::vector<engine::AgentsMdFile> fresh;
  try {
    for (const auto& dir : folders) {
      const std::string file = (dir / "AGENTS.md").string();
      if (s.conversation.agents_md_included.count(label + file)) continue;
      auto st = co_await ex.stat(file, cancel);
      if (!st.exists || st.is_directory) continue;
      if (auto f = engine::agents_md_file(label + file, co_await ex.read_file(file, cancel))) {
        s.conversation.agents_md_included.insert(f->path);
        fresh.push_back(std::move(*f));
      }
    }
  } catch (const ExecutorError& e) {  // what was found so far still counts
    spdlog::warn("session {}: AGENTS.md below {} on executor {} not read: {}", s.id, workdir, id, e.what());
  }
  if (fresh.empty()) co_return std::string();
  co_return "\n\n" + engine::agents_md_prompt(fresh);
}

}  // namespace runtime
