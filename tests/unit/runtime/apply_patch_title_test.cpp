// The title of an apply_patch call (and so of its permission prompt) names every file it
// writes: a move names where it goes, which is where it writes (issue 40 nit).
#include <gtest/gtest.h>

#include "runtime/tools/tool.hpp"

TEST(ApplyPatchTitle, AMoveNamesItsDestination) {
  auto tool = runtime::tools::make_apply_patch_tool();
  runtime::ToolEnv env{"s", "/ws/proj"};
  boost::json::object args{{"patch", "*** Begin Patch\n*** Update File: in.txt\n*** Move to: ../outside/x\n*** End Patch"}};
  auto d = tool->describe(args, env);
  EXPECT_NE(d.title.find("../outside/x"), std::string::npos) << "the title names the outside destination: " << d.title;
  EXPECT_NE(d.title.find("in.txt"), std::string::npos) << d.title;
  ASSERT_EQ(d.locations.size(), 2u) << "both files are locations the editor can follow";
  EXPECT_EQ(d.locations[1].path, "/ws/outside/x");
}
