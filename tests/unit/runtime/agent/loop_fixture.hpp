#pragma once
// The set-up of the turn-loop tests (agent_loop_test, steering_test): an AgentLoop whose one
// built-in tool is a `ToolT`, a scripted `ModelT`, an in-memory editor and a session in
// /work/project. Derive a fixture from it; turn() runs one turn of the user's text.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <string>
#include <vector>

#include "fakes.hpp"
#include "runtime/agent/agent_loop.hpp"

namespace fakes {

template <class ModelT, class ToolT>
class LoopTest : public ::testing::Test {
 protected:
  LoopTest() {
    auto t = std::make_unique<ToolT>();
    tool = t.get();
    std::vector<std::unique_ptr<runtime::tools::Tool>> builtins;
    builtins.push_back(std::move(t));
    loop = std::make_unique<runtime::AgentLoop>(editor, pool, std::move(builtins));
    session.id = "ses_test";
    session.settings.cwd = "/work/project";
    session.services.editor = &editor;
  }
  ~LoopTest() override { pool.join(); }

  runtime::StopReason turn(const std::string& prompt) {
    runtime::Message m;
    m.role = runtime::Message::Role::User;
    m.text = prompt;
    return run(ioc, loop->run_turn(session, std::move(m), model, settings, cancel));
  }

  boost::asio::io_context ioc;
  boost::asio::thread_pool pool{1};
  FakeEditor editor;
  ModelT model;
  ToolT* tool = nullptr;
  std::unique_ptr<runtime::AgentLoop> loop;
  runtime::Session session;
  runtime::TurnSettings settings;
  support::CancelSource cancel;
};

}  // namespace fakes
