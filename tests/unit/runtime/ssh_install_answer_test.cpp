// The ssh executor's install_file answer (issue 39.1): the path after "OVSAME " or "OVNEW " is the
// copy's absolute path there, exactly; a cached hook script is run by that path, so one stray
// character (a leading space) made every run after the first exit 127.
#include <gtest/gtest.h>

#include "runtime/executors/executors.hpp"

namespace {

using runtime::executors::parse_install_answer;

TEST(SshInstallAnswer, SameKeepsTheWholePathAndSaysNotWritten) {
  auto a = parse_install_answer("OVSAME /home/u/.cache/openvaala/hooks/0123456789abcdef/guard.sh\n");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->path, "/home/u/.cache/openvaala/hooks/0123456789abcdef/guard.sh");
  EXPECT_FALSE(a->written);
}

TEST(SshInstallAnswer, NewKeepsTheWholePathAndSaysWritten) {
  auto a = parse_install_answer("OVNEW /home/u/.cache/openvaala/hooks/0123456789abcdef/guard.sh\n");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->path, "/home/u/.cache/openvaala/hooks/0123456789abcdef/guard.sh");
  EXPECT_TRUE(a->written);
}

TEST(SshInstallAnswer, TheLastLineCountsAndSpacesInsideThePathStay) {
  // A login banner or a profile's chatter before the answer; a home with a space; CRLF endings.
  auto a = parse_install_answer("Welcome to the box\nOVSAME /home/my user/x.sh\r\n");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->path, "/home/my user/x.sh");
  EXPECT_FALSE(a->written);
}

TEST(SshInstallAnswer, AnythingElseIsNoAnswer) {
  EXPECT_FALSE(parse_install_answer(""));
  EXPECT_FALSE(parse_install_answer("OVSAME \n"));
  EXPECT_FALSE(parse_install_answer("OVNEW"));
  EXPECT_FALSE(parse_install_answer("OVSAME/x\n"));
  EXPECT_FALSE(parse_install_answer("OVSAME /x\nsomething after\n"));
  EXPECT_FALSE(parse_install_answer("mv: cannot move\n"));
}

}  // namespace
