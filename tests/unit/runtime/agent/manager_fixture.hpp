#pragma once
// The set-up of the tests that run a real SessionManager (session_manager_test, task_test): a
// temporary tree as HOME and as the XDG cache and data folders, and the manager over an in-memory
// editor. Derive a fixture from it; start_manager() reads the configuration as it is then.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdlib>
#include <memory>

#include "../engine_test_util.hpp"
#include "fakes.hpp"
#include "runtime/agent/session_manager.hpp"

namespace fakes {

class ManagerTest : public ::testing::Test {
 protected:
  ManagerTest() {
    ::setenv("HOME", tree.home().c_str(), 1);
    ::setenv("XDG_CACHE_HOME", tree.p("cache").c_str(), 1);
    ::setenv("XDG_DATA_HOME", tree.p("data").c_str(), 1);
  }
  ~ManagerTest() override {
    sessions.reset();
    pool.join();
  }

  // A fresh manager (it reads the configuration as it is now), its engine loading.
  void start_manager() {
    sessions.reset();
    runtime::SessionManager::Deps deps{ioc.get_executor(), &pool, &editor, {}, tree.config(), tree.p("sessions")};
    sessions = std::make_unique<runtime::SessionManager>(std::move(deps));
    sessions->engines().start_loading();
  }

  engine_test::Tree tree;
  boost::asio::io_context ioc;
  boost::asio::thread_pool pool{1};
  FakeEditor editor;
  std::unique_ptr<runtime::SessionManager> sessions;
};

}  // namespace fakes
