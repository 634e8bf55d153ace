// The tools' file checkpoints (checkpointing.hpp).
#include "runtime/agent/checkpointing.hpp"

#include <spawn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <set>

#include "runtime/sessions/checkpoints.hpp"
#include "runtime/sessions/session_store.hpp"
#include "support/file_io.hpp"
#include "support/run_blocking.hpp"

extern char** environ;

namespace runtime {

namespace fs = std::filesystem;
using Contents = std::map<fs::path, std::optional<std::string>>;

namespace {

// Files larger than this are not checkpointed (a restore reports them unavailable).
constexpr std::uint64_t kMaxFileBytes = 16ull << 20;

// What a file holds: nullopt when it does not exist (or is no regular file); `kept` false when it
// exists but is too large or unreadable (never mistaken for absent: a restore would delete it).
struct FileContent {
  bool kept = true;
  std::optional<std::string> content;
};
FileContent read_content(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return {};
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) > kMaxFileBytes) return {false, {}};
  auto text = support::read_file(path);
  return text ? FileContent{true, std::move(text)} : FileContent{false, {}};
}
std::optional<std::string> content_of(const fs::path& path) { return read_content(path).content; }

void checkpoint_before(sessions::CheckpointStore& store, const fs::path& path) {
  auto now = read_content(path);
  if (now.kept) store.before_change(path, now.content);
  else store.before_change_unkept(path);
}

// What `git -C dir args…` writes to stdout; nullopt when it cannot run or fails. Only git
// commands that run nothing a repository's config or attributes name are used here (ls-files,
// cat-file, rev-parse: no fsmonitor, hook, filter or textconv), so a command the model wrote into
// .git/config never runs outside the sandbox or without approval. No optional locks: the user's
// own git commands are not disturbed.
std::optional<std::string> git(const fs::path& dir, std::vector<std::string> args) {
  std::vector<std::string> argv{"git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false",
                                "--no-optional-locks", "-C", dir.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, "git", &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  std::string text;
  char buf[65536];
  for (ssize_t n; rc == 0 && ((n = ::read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR));)
    if (n > 0) text.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  if (rc != 0) return std::nullopt;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return text;
}

// A file's size and modification time (nullopt: it is not there).
struct Stamp {
  std::uint64_t size = 0;
  std::int64_t sec = 0, nsec = 0;
  bool operator==(const Stamp&) const = default;
};
std::optional<Stamp> stamp_of(const fs::path& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return Stamp{static_cast<std::uint64_t>(st.st_size), st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
}

// A tracked file as the index has it: its blob and the size and time git saw it with.
struct IndexEntry {
  std::string blob;
  Stamp seen;
};

// `git ls-files -s --debug -z`: "<mode> <blob> <stage>\t<path>\0" then four lines ("  ctime: s:ns",
// "  mtime: s:ns", "  dev: …", "  uid: …") and "  size: N\tflags: …" ends the entry.
std::map<fs::path, IndexEntry> index_entries(const fs::path& top) {
  std::map<fs::path, IndexEntry> out;
  auto text = git(top, {"ls-files", "-s", "--debug", "-z"});
  if (!text) return out;
  std::string_view rest(*text);
  while (!rest.empty()) {
    const std::size_t nul = rest.find('\0');
    if (nul == std::string_view::npos) break;
    const std::string_view head = rest.substr(0, nul);
    rest.remove_prefix(nul + 1);
    const std::size_t sp = head.find(' '), tab = head.find('\t');
    IndexEntry e;
    if (sp != std::string_view::npos && tab != std::string_view::npos) e.blob = std::string(head.substr(sp + 1, head.find(' ', sp + 1) - sp - 1));
    for (int line = 0; line < 5 && !rest.empty(); ++line) {
      const std::size_t nl = rest.find('\n');
      const std::string_view l = rest.substr(0, nl);
      rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
      long long a = 0, b = 0;
      if (std::sscanf(std::string(l).c_str(), "  mtime: %lld:%lld", &a, &b) == 2) e.seen.sec = a, e.seen.nsec = b;
      else if (std::sscanf(std::string(l).c_str(), "  size: %lld", &a) == 1) e.seen.size = static_cast<std::uint64_t>(a);
    }
    if (tab != std::string_view::npos) out[fs::path(std::string(head.substr(tab + 1)))] = std::move(e);
  }
  return out;
}

// The files git does not ignore and does not track (relative to the top).
std::vector<fs::path> untracked_files(const fs::path& top) {
  std::vector<fs::path> out;
  auto text = git(top, {"ls-files", "-z", "--others", "--exclude-standard"});
  if (!text) return out;
  std::string_view rest(*text);
  for (std::size_t nul; !rest.empty() && (nul = rest.find('\0')) != std::string_view::npos; rest.remove_prefix(nul + 1))
    out.emplace_back(std::string(rest.substr(0, nul)));
  return out;
}

// Whether a tracked file may hold something else than its blob: its size or time differ from what
// the index saw, or it changed in the index's own second (git's "racily clean" case).
bool maybe_changed(const IndexEntry& e, const std::optional<Stamp>& now, std::int64_t index_sec) {
  if (!now) return false;  // deleted: the blob is what it held
  const bool same = (now->size & 0xffffffffu) == e.seen.size && now->sec == e.seen.sec &&
                    (e.seen.nsec == 0 || now->nsec == e.seen.nsec);  // (the index keeps 32 bits of the size)
  return !same || now->sec >= index_sec;
}

}  // namespace

// GitSnapshot (bash in a git work tree), simple and correct for what git does not ignore: before
// the command every such file's size and time are noted, and the content of those that may differ
// from the last commit's index (untracked ones, tracked ones changed since git saw them) is
// copied (bounded). After it, each file whose size or time changed (or that came or went) is
// checkpointed with what it held before: the copy, else its blob in the index (it was clean),
// else nothing (it is new). Ignored files (build output) are not checkpointed.
struct GitSnapshot {
  static constexpr std::uint64_t kMaxCopiedBytes = 64ull << 20;
  fs::path top;
  std::map<fs::path, IndexEntry> tracked;
  std::map<fs::path, std::optional<Stamp>> stamps;  // every file listed, relative to top
  Contents copies;                                  // contents kept before the command
  std::set<fs::path> not_copied;                    // past the bound or too large: not restorable

  static GitSnapshot before(const fs::path& top);
  void after(sessions::CheckpointStore& store) const;
};

namespace {
std::int64_t index_second(const fs::path& top) {
  auto git_dir = git(top, {"rev-parse", "--absolute-git-dir"});
  if (!git_dir) return 0;
  while (!git_dir->empty() && git_dir->back() == '\n') git_dir->pop_back();
  auto st = stamp_of(fs::path(*git_dir) / "index");
  return st ? st->sec : 0;
}
}  // namespace

GitSnapshot GitSnapshot::before(const fs::path& top) {
  GitSnapshot s;
  s.top = top;
  s.tracked = index_entries(top);
  const std::int64_t index_sec = index_second(top);
  std::uint64_t copied = 0;
  auto copy = [&](const fs::path& p) {
    auto c = read_content(top / p);
    if (!c.kept || (c.content && copied + c.content->size() > kMaxCopiedBytes)) return void(s.not_copied.insert(p));
    copied += c.content ? c.content->size() : 0;
    s.copies[p] = std::move(c.content);
  };
  for (const auto& [p, e] : s.tracked) {
    s.stamps[p] = stamp_of(top / p);
    if (maybe_changed(e, s.stamps[p], index_sec)) copy(p);
  }
  for (const auto& p : untracked_files(top)) {
    s.stamps[p] = stamp_of(top / p);
    copy(p);
  }
  return s;
}

void GitSnapshot::after(sessions::CheckpointStore& store) const {
  std::set<fs::path> paths;
  for (const auto& [p, _] : stamps) paths.insert(p);
  for (const auto& [p, _] : index_entries(top)) paths.insert(p);
  for (auto& p : untracked_files(top)) paths.insert(p);
  for (const auto& p : paths) {
    auto was = stamps.find(p);
    const auto now_stamp = stamp_of(top / p);
    if (was != stamps.end() && was->second == now_stamp) continue;  // untouched
    if (not_copied.count(p)) {
      store.before_change_unkept(top / p);
      store.after_change(top / p, content_of(top / p));
      continue;
    }
    std::optional<std::string> then;  // absent: a new file
    if (auto c = copies.find(p); c != copies.end()) then = c->second;
    else if (auto t = tracked.find(p); t != tracked.end()) then = git(top, {"cat-file", "blob", t->second.blob});
    auto now = read_content(top / p);
    if (now.kept && now.content == then) continue;  // touched, not changed
    store.before_change(top / p, then);
    store.after_change(top / p, now.content);
  }
}


std::shared_ptr<sessions::CheckpointStore> checkpoints_of(Session& session) {
  auto& journal = session.services.journal;
  if (!journal) return nullptr;
  try {
    if (!session.services.checkpoints) {
      fs::path dir = journal->file();
      dir.replace_extension(".checkpoints");
      session.services.checkpoints = std::make_shared<sessions::CheckpointStore>(dir);
    }
  } catch (const std::exception& e) {
    spdlog::error("session {}: file checkpoints cannot be kept: {}", session.id, e.what());
  }
  return session.services.checkpoints;
}

void checkpoint_turn_start(Session& session, const std::string& message_id) {
  if (auto store = checkpoints_of(session)) store->begin_message(message_id);
}

fs::path remote_file_key(const std::string& executor, const std::string& path) { return "@" + executor + ":" + path; }

std::optional<std::pair<std::string, std::string>> remote_file_of(const fs::path& key) {
  const std::string& s = key.native();
  const auto colon = s.find(':');
  if (s.empty() || s[0] != '@' || colon == std::string::npos) return std::nullopt;
  return std::pair{s.substr(1, colon - 1), s.substr(colon + 1)};
}

boost::asio::awaitable<RemoteContent> remote_content(Executor& ex, const std::string& path) {
  try {
    const FileInfo info = co_await ex.stat(path, nullptr);
    if (!info.exists) co_return RemoteContent{};
    if (info.is_directory || info.size > kMaxFileBytes) co_return RemoteContent{false, {}};
    std::string content = co_await ex.read_file(path, nullptr);
    co_return RemoteContent{true, std::move(content)};
  } catch (const ExecutorError& e) {
    spdlog::warn("file checkpoint of {} on {}: {}", path, ex.info().id, e.what());
    co_return RemoteContent{false, {}};
  }
}

namespace {

// An edit on another executor: what its files hold there now, read through the executor.
boost::asio::awaitable<void> checkpoint_remote(sessions::CheckpointStore& store, Executor& ex,
                                               const std::vector<fs::path>& edits, bool before) {
  for (const auto& p : edits) {
    const std::string path = p.string();  // (named: GCC 12 destroys a temporary in co_await twice)
    const auto now = co_await remote_content(ex, path);
    const auto key = remote_file_key(ex.info().id, path);
    if (!before) store.after_change(key, now.content);
    else if (now.kept) store.before_change(key, now.content);
    else store.before_change_unkept(key);
  }
}

}  // namespace

// An edit on another executor: its files read there before; a command there: noted as not kept.
boost::asio::awaitable<FileCheckpoint> FileCheckpoint::take_remote(Session& session, const ToolEnv& env, bool bash,
                                                                   tools::Permission permission, std::vector<fs::path> edits) {
  FileCheckpoint c;
  auto ex = use_executor(session, env.executor);
  try {
    if (bash) session.services.checkpoints->commands_unkept(env.executor);
    if (permission != tools::Permission::Edit || !ex) co_return c;
    c.store_ = session.services.checkpoints;
    c.remote_ = std::move(ex);
    c.edits_ = std::move(edits);
    for (auto& p : c.edits_)
      if (p.is_relative()) p = env.cwd / p;
    co_await checkpoint_remote(*c.store_, *c.remote_, c.edits_, true);
  } catch (const std::exception& e) {
    spdlog::error("file checkpoint before {} on {}: {}", bash ? "a command" : "an edit", env.executor, e.what());
  }
  co_return c;
}

boost::asio::awaitable<FileCheckpoint> FileCheckpoint::take(Session& session, const ToolEnv& env, const std::string& tool,
                                                            tools::Permission permission, std::vector<fs::path> edits,
                                                            boost::asio::thread_pool& pool) {
  FileCheckpoint c;
  if (!session.services.checkpoints) co_return c;
  const bool bash = tool == "bash" && permission == tools::Permission::Execute;
  if (!env.on_local()) co_return co_await take_remote(session, env, bash, permission, std::move(edits));
  if (permission != tools::Permission::Edit && !bash) co_return c;
  c.store_ = session.services.checkpoints;
  c.pool_ = &pool;
  auto job = [&c, edits = std::move(edits), cwd = env.cwd, bash]() mutable {
    try {
      if (!bash) {
        for (const auto& p : edits) checkpoint_before(*c.store_, p);
        c.edits_ = std::move(edits);
      } else if (auto top = git(cwd, {"rev-parse", "--show-toplevel"})) {
        while (!top->empty() && top->back() == '\n') top->pop_back();
        c.git_ = std::make_shared<GitSnapshot>(GitSnapshot::before(fs::path(*top)));
      }
    } catch (const std::exception& e) {
      spdlog::error("file checkpoint before {}: {}", bash ? "a command" : "an edit", e.what());
    }
    return true;  // (run_blocking wants a value)
  };
  co_await support::run_blocking(pool, std::move(job));
  co_return c;
}

boost::asio::awaitable<void> FileCheckpoint::finish() {
  if (!store_) co_return;
  if (remote_) {
    try {
      co_await checkpoint_remote(*store_, *remote_, edits_, false);
    } catch (const std::exception& e) {
      spdlog::error("file checkpoint after an edit on {}: {}", remote_->info().id, e.what());
    }
    co_return;
  }
  auto job = [this] {
    try {
      for (const auto& p : edits_) store_->after_change(p, content_of(p));
      if (git_) git_->after(*store_);
    } catch (const std::exception& e) {
      spdlog::error("file checkpoint after a tool call: {}", e.what());
    }
    return true;
  };
  co_await support::run_blocking(*pool_, std::move(job));
}

}  // namespace runtime
