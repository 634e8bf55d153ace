// ssh_options of an ssh executor (issue 40, nit): the options openvaala sets itself (BatchMode,
// ControlMaster, ControlPath, ControlPersist) are refused however ssh would read them: with blanks
// around the keyword or the '=', in any case, as `Keyword value`, or quoted. The user's options come
// first on ssh's command line and ssh keeps the first value, so one that slipped through would win.
#include <gtest/gtest.h>

#include "engine_test_util.hpp"

using engine_test::contains;
using engine_test::join;
using engine_test::Tree;
using runtime::config::Diagnostics;

namespace {

struct Loaded {
  Diagnostics diags;
  std::size_t executors = 0;
  std::string file;  // executors/opts.yaml, as diagnostics name it
};

// Loads executors/opts.yaml with one ssh_options entry (a YAML double-quoted string) on line 4.
Loaded load_option(const std::string& yaml_quoted) {
  Tree t;
  t.write("config/executors/opts.yaml", "type: ssh\nhost: h\nssh_options:\n  - " + yaml_quoted + "\n");
  Loaded l;
  auto e = t.load(l.diags);
  l.executors = e->executors().size();
  l.file = (t.config() / "executors" / "opts.yaml").string();
  return l;
}

TEST(ExecutorSshOptions, ReservedOptionsAreRefusedHoweverWritten) {
  const std::pair<const char*, const char*> cases[] = {
      {R"("BatchMode=no")", "BatchMode"},
      {R"("BatchMode =no")", "BatchMode"},
      {R"("BatchMode = no")", "BatchMode"},
      {R"(" ControlMaster=no")", "ControlMaster"},
      {R"("batchmode\t=no")", "batchmode"},
      {R"("ControlPath =/tmp/elsewhere")", "ControlPath"},
      {R"("BatchMode no")", "BatchMode"},
      {R"("controlpersist\tno")", "controlpersist"},
      {R"("\"BatchMode\" no")", "BatchMode"},
      {R"("CONTROLPATH=none")", "CONTROLPATH"},
  };
  for (const auto& [option, keyword] : cases) {
    auto l = load_option(option);
    EXPECT_TRUE(contains(l.diags, l.file + ":4: '" + keyword +
                                      "' is set by openvaala (BatchMode and one shared connection per executor)"))
        << option << " slipped through:\n" << join(l.diags);
    EXPECT_EQ(l.executors, 0u) << option;
  }
}

TEST(ExecutorSshOptions, OrdinaryOptionsPassInBothForms) {
  for (const char* option : {R"("ProxyJump=bastion")", R"("ProxyJump bastion")", R"("ServerAliveInterval = 5")",
                             R"("BatchModeX=no")", R"("ControlPathish=x")"}) {
    auto l = load_option(option);
    EXPECT_TRUE(l.diags.empty()) << option << ":\n" << join(l.diags);
    EXPECT_EQ(l.executors, 1u) << option;
  }
}

TEST(ExecutorSshOptions, AnOptionWithoutAValueIsMalformed) {
  for (const char* option : {R"("ProxyJump")", R"("=no")", R"("  ")", R"("\"BatchMode")"}) {
    auto l = load_option(option);
    EXPECT_NE(join(l.diags).find(l.file + ":4: each ssh_options entry must be 'Option=value' (as ssh -o takes it)"),
              std::string::npos)
        << option << ":\n" << join(l.diags);
    EXPECT_EQ(l.executors, 0u) << option;
  }
}

}  // namespace
