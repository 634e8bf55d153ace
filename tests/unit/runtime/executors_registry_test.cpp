// The executor registry's count of the sessions that use each executor (Registry::use,
// session_ended): what no open session uses any more is handed back to be released (an
// image-mode container is removed then).
#include "executor_test_util.hpp"
#include "runtime/config/executor_config.hpp"

using namespace executor_test;
using runtime::config::ExecutorConfig;

namespace {

class ExecutorRegistry : public ExecutorTest {
 protected:
  ExecutorRegistry() : registry(deps(), dir / "builtin") {
    ExecutorConfig box;
    box.id = "box";
    box.type = ExecutorConfig::Type::Ssh;
    box.host = "devbox";
    ExecutorConfig docs;
    docs.id = "docs";
    docs.type = ExecutorConfig::Type::Virtual;
    docs.root = dir;
    registry.configure({{"box", box}, {"docs", docs}});
  }
  ~ExecutorRegistry() override { registry.shutdown(); }
  runtime::executors::Registry registry;
};

}  // namespace

TEST_F(ExecutorRegistry, AnExecutorIsReleasedWhenTheLastSessionUsingItEnds) {
  auto box = registry.use("box", dir, "s1");
  ASSERT_TRUE(box);
  EXPECT_EQ(registry.use("box", dir, "s2"), box) << "one executor for every session";
  registry.use("docs", dir, "s1");
  registry.use("local", dir, "s1");
  EXPECT_TRUE(registry.session_ended("s2").empty()) << "s1 still uses box";
  auto released = registry.session_ended("s1");
  ASSERT_EQ(released.size(), 2u) << "box and docs, not the per-session local";
  EXPECT_TRUE(std::find(released.begin(), released.end(), box) != released.end());
  EXPECT_TRUE(registry.session_ended("s1").empty()) << "released once";
}

TEST_F(ExecutorRegistry, FindAloneDoesNotCountAsUse) {
  registry.find("box", dir);
  registry.use("box", dir, "s1");
  registry.find("box", dir);
  EXPECT_EQ(registry.session_ended("s1").size(), 1u);
  EXPECT_TRUE(registry.session_ended("s9").empty()) << "a session that used nothing releases nothing";
}
