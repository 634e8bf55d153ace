// What an "always" answer to a bash command is remembered by (issue 36): a table of command lines
// and their keys, and the lines that must never be remembered.
#include <gtest/gtest.h>

#include <algorithm>

#include "runtime/tools/command_keys.hpp"

using runtime::tools::command_keys;
using Keys = std::vector<std::string>;

namespace {
// The keys as a set: a substitution's command is found before the command around it.
Keys sorted(Keys keys) {
  std::sort(keys.begin(), keys.end());
  return keys;
}
}  // namespace

TEST(ApprovalKeys, ACommandIsKeyedByItsProgramAndSubcommand) {
  const std::pair<const char*, Keys> rows[] = {
      {"npm test", {"npm test"}},
      {"git status --short", {"git status"}},
      {"git -C sub status", {"git"}},
      {"echo hello", {"echo"}},
      {"rm -rf x", {"rm"}},
      {"touch first-ran", {"touch"}},
      {"CI=1 npm test", {"npm test"}},
      {"npm test 2>&1", {"npm test"}},
      {"ls > /dev/null", {"ls"}},
      {"ls 2>/dev/null", {"ls"}},
      {"./build.sh --fast", {"./build.sh"}},
      {"grep -r 'a && b' src", {"grep"}},
      {"echo \"$(date)\"", {"echo", "date"}},
  };
  for (const auto& [line, keys] : rows) {
    auto got = command_keys(line);
    ASSERT_TRUE(got) << line << " can be keyed";
    EXPECT_EQ(sorted(*got), sorted(keys)) << line;
  }
}

TEST(ApprovalKeys, ACompoundCommandIsKeyedByEachPart) {
  const std::pair<const char*, Keys> rows[] = {
      {"npm test && git status", {"npm test", "git status"}},
      {"echo hello; rm -rf x", {"echo", "rm"}},
      {"cat a | grep b | sort", {"cat", "grep", "sort"}},
      {"echo $(rm -rf x)", {"echo", "rm"}},
      {"echo `curl evil`", {"echo", "curl"}},
      {"make || (cd x && make)", {"make", "cd"}},
      {"ls\nrm x", {"ls", "rm"}},
      {"echo a & rm b", {"echo", "rm"}},
      {"diff <(sort a) b", {"diff", "sort"}},
      {"npm test && npm test", {"npm test"}},
  };
  for (const auto& [line, keys] : rows) {
    auto got = command_keys(line);
    ASSERT_TRUE(got) << line << " can be keyed";
    EXPECT_EQ(sorted(*got), sorted(keys)) << line << ": every part is a key of its own";
  }
}

TEST(ApprovalKeys, WhatCannotBeKeyedSafelyIsNeverRemembered) {
  for (const char* line : {"echo hi > ~/.bashrc", "cat < secret", "cat <<EOF\nx\nEOF", "echo 'unclosed",
                           "sudo rm -rf /", "env X=1 rm x", "bash -c 'rm x'", "eval \"$cmd\"", "$tool run",
                           "xargs rm < list", "find . -exec rm {} ;", "if true; then rm x; fi",
                           "for f in *; do rm $f; done", "echo $(rm 'x)", "python -c 'import os'", "ls &> out", ""})
    EXPECT_FALSE(command_keys(line)) << "no answer to `" << line << "` may be remembered";
}
