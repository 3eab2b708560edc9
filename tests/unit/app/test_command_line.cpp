#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "abl/app/command_line.h"

TEST(CommandLine, QuotesOnlyWhatTheShellWouldSplit) {
  EXPECT_EQ(abl::app::shell_quote("--trial"), "--trial");
  EXPECT_EQ(abl::app::shell_quote("/runs/a_b-1.2/x=y,z@h:1%"), "/runs/a_b-1.2/x=y,z@h:1%");
  EXPECT_EQ(abl::app::shell_quote(""), "''");
  EXPECT_EQ(abl::app::shell_quote("two words"), "'two words'");
  EXPECT_EQ(abl::app::shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(abl::app::shell_quote("$HOME"), "'$HOME'");
}

TEST(CommandLine, RecordsArgvJoined) {
  std::vector<std::string> args = {"abliterate", "export", "--out", "my model", "--trial", "3"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  abl::app::record_command_line(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(abl::app::command_line(), "abliterate export --out 'my model' --trial 3");
}
