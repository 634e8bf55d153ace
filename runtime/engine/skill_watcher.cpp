// inotify watches on the skill places: one instance per watch() (added on the pool, then read on
// the io executor), so replacing the watched set never mixes descriptors of two sets.
#include "runtime/engine/skill_watcher.hpp"
#include "runtime/engine/skill_search.hpp"

#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>

namespace runtime::engine {

namespace fs = std::filesystem;

namespace {

enum class WatchKind {
  SkillFolder,   // holds SKILL.md: only that file matters
  SearchFolder,  // searched for skills: a folder (or SKILL.md) coming or going changes the search
  AheadOfPlace,  // the nearest existing folder above a place that does not exist yet
};

struct Watch {
  fs::path dir;
  WatchKind kind;
  std::set<std::string> awaited;  // AheadOfPlace: the names on the way to the places awaited here
};

constexpr uint32_t kSelfGone = IN_DELETE_SELF | IN_MOVE_SELF;
constexpr uint32_t kEntryComesOrGoes = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;

// One inotify instance with its watches, made on the pool.
struct Armed {
  int fd = -1;
  std::unordered_map<int, Watch> watches;
  bool stale = false;        // the search would find other folders now: a whole reload
  std::vector<fs::path> changed;  // SKILL.md files written between the load and their watch
  bool over_limit = false;   // fs.inotify.max_user_watches (or memory) reached
  ~Armed() {
    if (fd >= 0) ::close(fd);
  }
};

bool is_hidden(std::string_view name) { return !name.empty() && name[0] == '.'; }

// What changed between the load and this folder's watch (its events start only now): the
// watch is added first, then the folder is compared with what the search saw.
void check_since_load(const engine::SkillFolder& folder, Armed& a) {
  struct stat st{};
  const fs::path skill_file = folder.dir / "SKILL.md";
  const bool has_skill_file = ::stat(skill_file.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  if (!folder.holds_skill_file) {
    if (has_skill_file || engine::skill_search_subfolders(folder.dir).size() != folder.subfolders) a.stale = true;
    return;
  }
  if (!has_skill_file) {
    a.stale = true;
    return;
  }
  if (engine::changed_since(folder.skill_file, st)) a.changed.push_back(folder.dir);
}

}  // namespace

struct SkillWatcher::State {
  State(boost::asio::any_io_executor ex, boost::asio::thread_pool& p, std::function<void(Change)> f)
      : executor(std::move(ex)), pool(p), on_change(std::move(f)) {}
  boost::asio::any_io_executor executor;
  boost::asio::thread_pool& pool;
  std::function<void(Change)> on_change;
  std::atomic<bool> stopped{false};
  std::atomic<std::uint64_t> generation{0};  // of the newest watch(): older arms are dropped
  std::shared_ptr<Armed> armed;
  std::optional<boost::asio::posix::stream_descriptor> descriptor;
  bool limit_logged = false;
};

namespace {

// Adds a watch per folder of every place (the pool's side). Stops early when the watcher stops
// or a newer watch() superseded this one.
std::unique_ptr<Armed> arm(const std::vector<engine::SkillPlace>& places, const SkillWatcher::State& state,
                           std::uint64_t generation) {
  auto a = std::make_unique<Armed>();
  a->fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (a->fd < 0) {
    a->over_limit = true;  // fs.inotify.max_user_instances
    return a;
  }
  auto add = [&](const fs::path& dir, uint32_t mask, Watch w) {
    // IN_MASK_ADD: one folder awaited for two places (~/.agents, ~/.config under a bare home) is
    // one watch descriptor; the second add must widen it, not replace it.
    int wd = ::inotify_add_watch(a->fd, dir.c_str(), mask | IN_ONLYDIR | IN_MASK_ADD);
    if (wd >= 0) {
      auto [it, added_now] = a->watches.emplace(wd, w);
      if (!added_now) it->second.awaited.insert(w.awaited.begin(), w.awaited.end());
      return;
    }
    if (errno == ENOSPC || errno == ENOMEM) a->over_limit = true;
    if (errno == ENOENT || errno == ENOTDIR) a->stale = true;
    // EACCES: a folder the search could enter but not list; nothing was found below it either.
  };
  std::size_t added = 0;
  for (const auto& place : places) {
    if (place.folders->empty()) {
      // The place does not exist: watch for it to be made, from the nearest folder that does.
      fs::path ahead = place.root;
      std::string awaited;
      struct stat st{};
      while (ahead.has_relative_path() && ::stat(ahead.c_str(), &st) != 0) {
        awaited = ahead.filename().string();
        ahead = ahead.parent_path();
      }
      if (awaited.empty()) {
        if (S_ISDIR(st.st_mode)) a->stale = true;  // the place itself was made since the load
      } else if (S_ISDIR(st.st_mode)) {
        add(ahead, IN_CREATE | IN_MOVED_TO, {ahead, WatchKind::AheadOfPlace, {awaited}});
        if (::stat((ahead / awaited).c_str(), &st) == 0) a->stale = true;  // made since the load
      }
      continue;
    }
    for (const auto& folder : *place.folders) {
      if ((++added & 255) == 0 && (state.stopped || state.generation != generation)) return nullptr;
      if (folder.holds_skill_file)
        add(folder.dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | kSelfGone, {folder.dir, WatchKind::SkillFolder, {}});
      else
        add(folder.dir, kEntryComesOrGoes | kSelfGone, {folder.dir, WatchKind::SearchFolder, {}});
      if (a->over_limit) return a;
      check_since_load(folder, *a);
    }
  }
  return a;
}

// What one event means for the skills: nothing, a SKILL.md to read again, or a whole reload.
void classify(const Armed& a, const inotify_event& ev, SkillWatcher::Change& change, std::set<fs::path>& dirs) {
  if (ev.mask & (IN_Q_OVERFLOW | IN_UNMOUNT)) {
    change.whole = true;
    return;
  }
  auto it = a.watches.find(ev.wd);
  if (it == a.watches.end() || (ev.mask & IN_IGNORED)) return;
  const Watch& w = it->second;
  if (ev.mask & kSelfGone) {
    change.whole = true;
    return;
  }
  const std::string_view name = ev.len ? std::string_view(ev.name) : std::string_view();
  switch (w.kind) {
    case WatchKind::SkillFolder:
      if (name == "SKILL.md") dirs.insert(w.dir);
      return;
    case WatchKind::SearchFolder: {
      if (name.empty() || is_hidden(name)) return;  // the search skips hidden names
      if ((ev.mask & IN_ISDIR) || name == "SKILL.md") {
        change.whole = true;
        return;
      }
      // Not a folder itself; a symlink to one is searched too. What went cannot be looked at: reload.
      struct stat st{};
      const fs::path entry = w.dir / name;
      if (!(ev.mask & (IN_CREATE | IN_MOVED_TO)) || (::stat(entry.c_str(), &st) == 0 && S_ISDIR(st.st_mode)))
        change.whole = true;
      return;
    }
    case WatchKind::AheadOfPlace:
      if (w.awaited.count(std::string(name))) change.whole = true;
      return;
  }
}

void read_events(const std::shared_ptr<SkillWatcher::State>& state);

void wait_for_events(const std::shared_ptr<SkillWatcher::State>& state) {
  state->descriptor->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                                [state, armed = state->armed.get()](boost::system::error_code ec) {
                                  if (ec || state->stopped || state->armed.get() != armed) return;
                                  read_events(state);
                                });
}

void read_events(const std::shared_ptr<SkillWatcher::State>& state) {
  alignas(inotify_event) char buf[64 * 1024];
  SkillWatcher::Change change;
  std::set<fs::path> dirs;
  for (;;) {
    ssize_t n = ::read(state->armed->fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: all read
    for (char* p = buf; p < buf + n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(p);
      classify(*state->armed, *ev, change, dirs);
      p += sizeof(inotify_event) + ev->len;
    }
  }
  if (!change.whole) change.skill_dirs.assign(dirs.begin(), dirs.end());
  if (change.whole || !change.skill_dirs.empty()) state->on_change(std::move(change));
  if (!state->stopped && state->descriptor) wait_for_events(state);
}

}  // namespace

SkillWatcher::SkillWatcher(boost::asio::any_io_executor executor, boost::asio::thread_pool& pool,
                           std::function<void(Change)> on_change)
    : state_(std::make_shared<State>(std::move(executor), pool, std::move(on_change))) {}

SkillWatcher::~SkillWatcher() { stop(); }

void SkillWatcher::stop() {
  state_->stopped = true;
  if (state_->descriptor) {
    state_->descriptor->release();  // Armed closes the descriptor
    state_->descriptor.reset();
  }
  state_->armed.reset();
}

void SkillWatcher::watch(const std::vector<engine::SkillPlace>& places) {
  if (state_->stopped) return;
  const std::uint64_t generation = ++state_->generation;
  boost::asio::post(state_->pool, [state = state_, places, generation] {
    std::shared_ptr<Armed> armed = arm(places, *state, generation);
    boost::asio::post(state->executor, [state, armed, generation]() mutable {
      if (!armed || state->stopped || state->generation != generation) return;
      if (armed->over_limit) {
        if (!std::exchange(state->limit_logged, true))
          spdlog::warn("skills: cannot watch the skill folders for changes (the system's inotify limit is reached: "
                       "fs.inotify.max_user_watches or max_user_instances); skills change on `openvaala serve reload`");
        return;
      }
      if (state->descriptor) {
        state->descriptor->release();
        state->descriptor.reset();
      }
      // Armed owns the fd (and closes it); the descriptor object only waits on it.
      state->armed = std::move(armed);
      state->descriptor.emplace(state->executor, state->armed->fd);
      spdlog::info("skills: watching {} folders for changes", state->armed->watches.size());
      wait_for_events(state);
      if (state->armed->stale)
        state->on_change({true, {}});
      else if (!state->armed->changed.empty())
        state->on_change({false, std::move(state->armed->changed)});
    });
  });
}

}  // namespace runtime::engine
