// The skill watcher's catch-up and its waits for places not made yet: a SKILL.md changed between
// the load and its watch is read again, even when the change kept its mtime; a place made later
// is found whichever of several missing places under one folder it is.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <optional>

#include "engine_test_util.hpp"
#include "runtime/engine/loaders.hpp"
#include "runtime/engine/skill_watcher.hpp"

using namespace runtime::engine;
using engine_test::Tree;
using runtime::config::Diagnostic;
using runtime::config::Diagnostics;
namespace fs = std::filesystem;

namespace {

struct Watching {
  boost::asio::io_context io;
  // Keeps run_one_for waiting for the pool's posts instead of returning at once with no work.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> busy = boost::asio::make_work_guard(io);
  boost::asio::thread_pool pool{1};
  std::vector<SkillWatcher::Change> changes;
  SkillWatcher watcher{io.get_executor(), pool, [this](SkillWatcher::Change c) { changes.push_back(std::move(c)); }};

  ~Watching() {
    watcher.stop();
    pool.join();
  }
  // Arms the watches and runs until they are in place (with any catch-up reported by then).
  void watch(const std::vector<SkillPlace>& places) {
    watcher.watch(places);
    bool armed = false;
    // The pool has one thread: this job runs after arm(), and its post lands after arm()'s.
    boost::asio::post(pool, [&] { boost::asio::post(io, [&] { armed = true; }); });
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!armed && std::chrono::steady_clock::now() < until) io.run_one_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(armed) << "the watches were not in place within 5 s";
  }
  // Runs the io until a change is reported (or 5 s pass).
  void await_change() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (changes.empty() && std::chrono::steady_clock::now() < until) io.run_one_for(std::chrono::milliseconds(50));
  }
};

SkillPlace scan(const fs::path& root) {
  Diagnostics d;
  return detail::scan_skill_place(root, SkillSource::Private, Diagnostic::Severity::Error, d);
}

void set_mtime(const fs::path& file, const struct timespec& t) {
  const struct timespec times[2] = {t, t};
  ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0) << file;
}

struct timespec mtime_of(const fs::path& file) {
  struct stat st{};
  ::stat(file.c_str(), &st);
  return st.st_mtim;
}

// A SKILL.md last written long ago, so that the load's stamp of it is not racy.
fs::path old_skill(const Tree& t, const std::string& text) {
  fs::path f = t.write("config/skills/alpha/SKILL.md", text);
  set_mtime(f, {::time(nullptr) - 60, 0});
  return f;
}

const std::string kFirst = "---\nname: alpha\ndescription: first\n---\nBody\n";

TEST(SkillWatcher, AnUnchangedOldSkillFileIsNotReadAgain) {
  Tree t;
  old_skill(t, kFirst);
  Watching w;
  w.watch({scan(t.p("config/skills"))});
  EXPECT_TRUE(w.changes.empty()) << "a SKILL.md untouched since the load must not be reported as changed";
}

TEST(SkillWatcher, AWriteThatKeptTheMtimeButNotTheSizeIsReadAgain) {
  Tree t;
  const fs::path f = old_skill(t, kFirst);
  std::vector<SkillPlace> places{scan(t.p("config/skills"))};
  const struct timespec seen = mtime_of(f);
  t.write("config/skills/alpha/SKILL.md", "---\nname: alpha\ndescription: second, longer\n---\nBody\n");
  set_mtime(f, seen);  // a write in the same timestamp tick as the load's read
  Watching w;
  w.watch(places);
  ASSERT_EQ(w.changes.size(), 1u) << "a SKILL.md whose size changed since the load must be read again";
  EXPECT_FALSE(w.changes[0].whole);
  EXPECT_EQ(w.changes[0].skill_dirs, std::vector<fs::path>{t.p("config/skills/alpha")});
}

TEST(SkillWatcher, ASkillFileReadInTheTickItWasWrittenIsReadAgain) {
  Tree t;
  t.skill("config/skills/alpha", "alpha", "written just now");
  std::vector<SkillPlace> places{scan(t.p("config/skills"))};
  Watching w;
  w.watch(places);
  ASSERT_EQ(w.changes.size(), 1u)
      << "a SKILL.md modified within a timestamp tick of its read may have changed unseen: it must be read again";
  EXPECT_EQ(w.changes[0].skill_dirs, std::vector<fs::path>{t.p("config/skills/alpha")});
}

TEST(SkillWatcher, EachOfTwoMissingPlacesUnderOneFolderIsFoundWhenMade) {
  for (const char* made : {".agents", ".claude"}) {
    Tree t;
    std::vector<SkillPlace> places{scan(t.home() / ".agents/skills"), scan(t.home() / ".claude/skills")};
    Watching w;
    w.watch(places);
    ASSERT_TRUE(w.changes.empty());
    fs::create_directories(t.home() / made / "skills");
    w.await_change();
    ASSERT_EQ(w.changes.size(), 1u) << "making ~/" << made
                                    << " must be noticed although another missing place waits on the same folder";
    EXPECT_TRUE(w.changes[0].whole);
  }
}

}  // namespace
